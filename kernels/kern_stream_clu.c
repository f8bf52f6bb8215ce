/* The cluster cut's run (kernels.h, kern_cluster_run): the plan
 * (kernels/kern_cluster.c) groups the clusters that are not proved apart
 * at the run's eps, and one engine run joins each group's own pairs over
 * the plan's layout: the members group by group, each group padded to
 * whole tiles and centred on its own origin, only the tiles within a group
 * joined (kern_join_args.rows, origins, clu). Every pair of groups is
 * apart, so no pair between them is within eps. The outputs are renumbered
 * to the dataset's rows through kern_stream_run's helpers
 * (kernels/kern_stream.h; stream_layout, which the tile cut shares).
 * The layout's arrays are the plan's, kept while its groups stay the
 * same, so a run again over one dataset finds the engine's device caches
 * holding it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_cluster.h"
#include "kern_stream.h"
#include "kernels.h"

/* The power of two the run's values are scaled by (0: none) so that
 * values up to vm after centring stay within FP16's range, as exact
 * scales. */
static double clu_scale(double vm)
{
    double s = 1;
    while (vm * s > EXACT_FP16_MAX)
        s *= 0.5;
    return s < 1 ? s : 0;
}

/* The renumbering's buffers (stream_ctx ti, tj), kept from run to run as
 * the plans are (one join at a time): every pair of a PAIRS run over a
 * layout is renumbered, and fresh buffers for a batch of up to 4M pairs
 * paid their allocation and first touch on every run. At most two
 * batches' rows are held. */
static struct {
    uint32_t *ti, *tj;
    size_t cap;
} g_ren;

int stream_layout(kern_join_fn fn, const kern_join_args *a, kern_join_args *s, const char *what,
                  kern_join_result *r)
{
    stream_out o;
    memset(r, 0, sizeof *r);
    int rc = stream_out_open(a, &o, s->n, what);
    if (rc)
        return rc;
    stream_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.ti = g_ren.ti;
    c.tj = g_ren.tj;
    c.tcap = g_ren.cap;
    s->q0 = 0;
    s->q1 = s->n;
    s->c0 = 0;
    s->xc = NULL;
    c.m = (stream_map){.map = s->rows};
    c.work = c.total = 1;
    kern_join_result x;
    kern_trace_mark("layout: open");
    rc = stream_call(fn, a, s, &c, &o, r, &x);
    kern_trace_mark("layout: the run");
    if (!rc && c.failed)
        rc = kern_fail_msg(KERN_ENOMEM, "out of host memory renumbering the pairs");
    r->symmetric = x.symmetric;
    g_ren.ti = c.ti;
    g_ren.tj = c.tj;
    g_ren.cap = c.tcap;
    stream_out_close(a, &o, !rc);
    kern_trace_mark("layout: close");
    return rc;
}

/* The run over layout L, its outputs into r. */
static int clu_layout_run(kern_join_fn fn, const kern_join_args *a, const clu_layout *L,
                          kern_join_result *r)
{
    kern_join_args s = *a;
    s.n = L->n;
    s.center = NULL;
    s.rows = L->rows;
    s.origins = L->o;
    s.origin_of = L->origin;
    s.clu = L->clu;
    s.nclu = L->K;
    s.blk = NULL;
    s.nblk = 0;
    s.scale = clu_scale(L->vmax);
    s.hash = stream_hash(a->hash ^ 0xc1a55e5c1a55e5c1ull, (size_t)L->K, L->n, (size_t)L->key);
    return stream_layout(fn, a, &s, "the cluster cut", r);
}

int kern_cluster_run(kern_join_fn fn, const kern_join_args *a, kern_join_result *r, int force,
                     size_t min_rows)
{
    /* An ordinary symmetric run: the layout joins the upper triangle of
     * each group's block (a padding row's pair with itself is dropped by
     * exact's classify, exact_bnd_kernel). */
    if (!a->symmetric || a->c0 || a->q0 != 0 || a->q1 != a->n || a->n > UINT32_MAX || a->rows ||
        a->sub)
        return fn(a, r);
    const double lim = sqrt(a->mode == KJOIN_HIST ? a->hist_edges[a->hist_nbins] : a->eps * a->eps);
    const clu_plan *p;
    const clu_layout *L = NULL;
    kern_trace_mark("cut: start");
    int rc = clu_plan_sample(a, min_rows, &p), ok = 0;
    /* The sample's radii are the rows' at most: where the sample makes
     * one group, so do the rows, and the pass over them is spared. */
    if (!rc && p && (force || clu_sample_work(p, a->n, a->d, lim) <= KERN_CLU_KEEP))
        rc = clu_plan_rows(a, &ok);
    kern_trace_mark("cut: sample and rows");
    if (!rc && ok)
        rc = clu_plan_layout(a, lim, &L);
    kern_trace_mark("cut: layout");
    if (rc)
        return rc;
    if (!L || !(force || L->work <= KERN_CLU_KEEP))
        return fn(a, r);
    rc = clu_layout_run(fn, a, L, r);
    r->clusters = (unsigned)L->K;
    r->cluster_work = L->work;
    return rc;
}

int kern_exact_clusters_run(const kern_join_args *a, kern_join_result *r)
{
    return kern_cluster_run(kern_exact_run, a, r, 1, KERN_CLU_MIN_ROWS);
}

int kern_exact_clusters_auto_run(const kern_join_args *a, kern_join_result *r)
{
    return kern_cluster_run(kern_exact_run, a, r, 0, KERN_CLU_MIN_ROWS);
}
