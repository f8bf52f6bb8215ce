/* `ted-index`: TED-Join with GDS-Join's grid index. Dimensions are
 * reordered by variance (largest first); cells of side eps cover the first
 * k of them; points are sorted by cell, so a cell's points are one range.
 * Query points are grouped 8 to a warp within a cell, so the warp's queries
 * share their candidates: the 3^k neighbouring cells, found by binary search
 * in the sorted array of non-empty cell keys (the 3 neighbours along the
 * first indexed dimension are consecutive keys, one search covers them).
 * Distances on FP64 tensor cores (mma m8n8k4, A scaled by -2), with the
 * loop over dimensions cut short once every distance of the warp's 8x8 tile
 * has passed eps (partial sums against prefix norms every 32 dimensions). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "f64_common.cuh"
#include "grid_index.cuh"
#include "kern_util.cuh"
#include "ptx_f64.cuh"

#define TI_CHUNK 32 /* dimensions between short-circuit checks */
#define TI_WARPS 8
#define TI_GROUP 8 /* query points of one cell per warp */

/* Prefix squared norms of each row at the end of each chunk of dims. */
__global__ void ti_prefix_kernel(const double *__restrict__ x, size_t n, size_t dp, int nch,
                                 double *__restrict__ pre)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const double *r = x + i * dp;
    double s = 0;
    for (int c = 0; c < nch; c++) {
        size_t k1 = (size_t)(c + 1) * TI_CHUNK < dp ? (size_t)(c + 1) * TI_CHUNK : dp;
        for (size_t k = (size_t)c * TI_CHUNK; k < k1; k++)
            s += r[k] * r[k];
        pre[i * nch + c] = s;
    }
}

__global__ void __launch_bounds__(TI_WARPS * 32)
    ti_join_kernel(const double *__restrict__ x, const double *__restrict__ pre, int nch, size_t dp,
                   const uint32_t *__restrict__ ids, const long long *__restrict__ ukey,
                   const size_t *__restrict__ cstart, size_t ncell, const size_t *__restrict__ gpos,
                   const uint32_t *__restrict__ glen, const uint32_t *__restrict__ gcell,
                   const size_t *__restrict__ qpos, grid_dims grid, size_t ga, size_t gb, size_t pa,
                   size_t pb, f64_out o)
{
    const int lane = threadIdx.x & 31, g = f64_frag_g(lane), t = f64_frag_t(lane);
    const size_t grp = ga + (((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    if (grp >= gb)
        return; /* uniform over the warp */
    const unsigned len = glen[grp];
    const bool qok = (unsigned)g < len;
    const size_t qp = qpos[gpos[grp] + (qok ? g : len - 1)];
    const double *arow = x + qp * dp;
    const double *qpre = pre + qp * nch;
    const uint32_t qid = ids[qp];
    const double eps2 = o.eps2;
    unsigned long long local = 0;

    grid_walk gw;
    grid_walk_init(grid, ukey[gcell[grp]], gw);
    for (int nb = 0; nb < gw.nnb; nb++) {
        size_t cs, ce;
        if (!grid_walk_range(grid, gw, nb, ukey, ncell, cstart, pa, pb, cs, ce))
            continue;
        for (size_t c0 = cs; c0 < ce; c0 += 8) {
            const size_t crow = c0 + g < ce ? c0 + g : ce - 1;
            const double *brow = x + crow * dp;
            const size_t col0 = c0 + 2 * t, col1 = col0 + 1;
            const bool ok0 = qok && col0 < ce, ok1 = qok && col1 < ce;
            const size_t cc0 = ok0 ? col0 : ce - 1, cc1 = ok1 ? col1 : ce - 1;
            double acc[2] = {0.0, 0.0};
            bool done = false;
            for (int c = 0; c < nch && !done; c++) {
                size_t k1 = (size_t)(c + 1) * TI_CHUNK < dp ? (size_t)(c + 1) * TI_CHUNK : dp;
                for (size_t k = (size_t)c * TI_CHUNK; k < k1; k += 4)
                    mma_m8n8k4_f64(acc, -2.0 * arow[k + t], brow[k + t], acc);
                double p0 = acc[0] + qpre[c] + pre[cc0 * nch + c];
                double p1 = acc[1] + qpre[c] + pre[cc1 * nch + c];
                bool live = (ok0 && p0 <= eps2) || (ok1 && p1 <= eps2);
                if (!__any_sync(0xffffffffu, live))
                    done = true;
                else if (c == nch - 1) {
                    if (ok0)
                        f64_emit(o, qid, ids[col0], fmax(p0, 0.0), local);
                    if (ok1)
                        f64_emit(o, qid, ids[col1], fmax(p1, 0.0), local);
                }
            }
        }
    }
    f64_flush(o, local);
}

struct ti_dev {
    double *x, *pre;
    int nch;
    size_t dp;
    grid_dev g;
};

static int ti_launch(f64_run *r, const f64_item *it, void *user)
{
    const ti_dev *v = (const ti_dev *)user;
    size_t blocks = (it->qb - it->qa + TI_WARPS - 1) / TI_WARPS;
    ti_join_kernel<<<(unsigned)blocks, TI_WARPS * 32, 0, r->k.st>>>(
        v->x, v->pre, v->nch, v->dp, v->g.ids, v->g.ukey, v->g.cstart, v->g.ncell, v->g.gpos,
        v->g.glen, v->g.gcell, v->g.qpos, v->g.grid, it->qa, it->qb, it->ca, it->cb, r->out);
    return 0;
}

/* The index, the rows in cell order and their prefix norms, per device
 * ordinal (grid_cache: rows[0] the rows, rows[1] the prefix norms). */
static grid_cache g_ti[KERN_DEV_SLOTS];

void ted_index_release(void)
{
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        grid_cache_free(g_ti[d]);
}

/* Build the index of a's rows and upload it, the rows in cell order with
 * dimensions by variance (gathered a slab at a time) and their prefix
 * norms into this device's slot (the run charged for them). */
static int ti_build(f64_run *r, const kern_join_args *a, double eps, int k, size_t dp, int nch,
                    grid_cache &c)
{
    grid_index ix;
    double t0 = kern_now();
    int rc = grid_build(a, eps, k, 0, TI_GROUP, &ix);
    r->res->t_prep += kern_now() - t0;
    const size_t used = r->k.mem_used, n = a->n;
    double *x = NULL, *pre = NULL;
    c.dev = a->device;
    if (rc == 0)
        rc = f64_upload(r, a, ix.order, dp, ix.perm, &x);
    c.rows[0] = x;
    t0 = kern_now();
    if (rc == 0)
        rc = grid_upload(r, &ix, &c.g);
    if (rc == 0)
        rc = f64_malloc(r, (void **)&pre, n * nch * sizeof(double), "the prefix norms");
    c.rows[1] = pre;
    if (rc == 0) {
        ti_prefix_kernel<<<(unsigned)((n + 255) / 256), 256, 0, r->k.st>>>(x, n, dp, nch, pre);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(r->k.st);
        if (e != cudaSuccess)
            rc = kern_cuda_fail(e, "ti_prefix_kernel", __FILE__, __LINE__);
    }
    r->res->t_h2d += kern_now() - t0;
    if (rc == 0)
        grid_cache_keep(c, a, eps, k, TI_GROUP, ix.ngroup, r->k.mem_used - used);
    else
        grid_cache_free(c);
    grid_free(&ix);
    return rc;
}

/* The whole item list on one device (q NULL), or one device's share of a
 * run over several (kern_multi_fn): each device builds the same index (in
 * parallel, on the host; or finds it in its slot) and takes ranges of
 * query groups from q. A group's candidates and arithmetic do not depend
 * on the range it is in. */
static int ted_index_run_q(const kern_join_args *a, kern_join_result *res, kern_queue *q,
                           unsigned long long *taken)
{
    f64_run r;
    int rc = f64_begin(&r, a, res, "ted-index", 1);
    if (rc)
        return rc;
    r.q = q;
    res->prep_name = "index";
    double eps = a->mode == KJOIN_HIST ? sqrt(a->hist_edges[a->hist_nbins]) : a->eps;
    if (!(eps > 0) || !isfinite(eps)) {
        f64_end(&r);
        return kern_fail(KERN_EINVAL, "ted-index needs a positive finite eps (got %g)", eps);
    }
    const int k = a->index_k > 0 ? a->index_k : 6;
    ti_dev v;
    memset(&v, 0, sizeof v);
    v.dp = (a->d + 3) / 4 * 4;
    v.nch = (int)((v.dp + TI_CHUNK - 1) / TI_CHUNK);
    grid_cache &c = g_ti[a->device];
    if (grid_cache_is(c, a, eps, k, TI_GROUP)) {
        res->cache_hit = 1;
        rc = kern_charge(&r.k, c.bytes, "the grid index");
    } else {
        grid_cache_free(c);
        rc = ti_build(&r, a, eps, k, v.dp, v.nch, c);
    }
    v.x = (double *)c.rows[0];
    v.pre = (double *)c.rows[1];
    v.g = c.g;
    if (rc == 0)
        rc = grid_drive(&r, c.ngroup, ti_launch, &v, "ted-index");
    if (rc == 0)
        rc = f64_finish(&r);
    res->d_padded = v.dp;
    snprintf(res->variant, sizeof res->variant,
             "index k=%d, %zu cells, %zu groups, mma m8n8k4, 8 queries/warp", c.g.grid.k, c.g.ncell,
             c.ngroup);
    if (taken)
        *taken = r.taken;
    f64_end(&r);
    return rc;
}

extern "C" int kern_ted_index_run(const kern_join_args *a, kern_join_result *res)
{
    if (a->c0) { /* kern_stream_run's cross run */
        memset(res, 0, sizeof *res);
        return kern_fail(KERN_ECROSS, "ted-index takes no cross run: its grid index covers"
                                      " every row of its run");
    }
    if (a->ndevices > 0 || a->tiles)
        return kern_multi_run(a, res, ted_index_run_q);
    return ted_index_run_q(a, res, NULL, NULL);
}
