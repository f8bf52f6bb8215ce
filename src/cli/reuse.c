#include "reuse.h"

#include <stdio.h>
#include <string.h>

#include "dist.h"
#include "err.h"
#include "out.h"
#include "settings.h"
#include "store.h"

const char *reuse_phase_name(const char *name)
{
    /* The engines' phase names; anything else is stored under "other". */
    static const char *const known[] = {"h2d", "convert", "norms",   "index", "kernel", "select",
                                        "d2h", "sink",    "compute", "join",  "load",   NULL};
    for (const char *const *k = known; *k; k++)
        if (strcmp(*k, name) == 0)
            return *k;
    return "other";
}

int reuse_find(session *s, const engine *e, reuse_run *out)
{
    memset(out, 0, sizeof *out);
    /* tcjoin-mpi: rank 0 alone has the log; every rank must run the same
     * joins, so none is reused (src/dist.h). */
    if (dist && dist->nranks > 1)
        return 0;
    if (!s->db || !s->have_ds || !s->have_eps)
        return 0;
    char opts[512];
    settings_describe(s, e, opts, sizeof opts);
    store_reuse_key key = {
        .session_id = s->session_id,
        .engine = e->name,
        .options = opts,
        .dataset_hash = s->ds.hash,
        .eps = s->eps,
        .n = s->ds.n,
        .d = s->ds.d,
    };
    store_run_summary sum;
    int64_t id = store_reusable_run(s->db, &key, &sum);
    if (id <= 0)
        return (int)id;
    out->id = id;
    snprintf(out->at, sizeof out->at, "%s", sum.at);
    join_result *r = &out->res;
    r->pairs = sum.pairs;
    r->seconds = sum.seconds;
    r->kernel_seconds = sum.kernel_seconds;
    r->d_padded = sum.d_padded;
    snprintf(r->precision, sizeof r->precision, "%s",
             sum.precision[0] ? sum.precision : e->precision);
    snprintf(r->variant, sizeof r->variant, "%s", sum.variant);
    snprintf(r->device, sizeof r->device, "%s", sum.device);
    for (int k = 0; k < sum.nphase; k++)
        join_result_phase(r, reuse_phase_name(sum.phase_name[k]), sum.phase_seconds[k]);
    /* the counters too: the lab shows a run's transforms from them */
    for (int k = 0; k < sum.nmetric; k++)
        join_result_metric(r, sum.metric[k].name, sum.metric[k].value, sum.metric[k].unit);
    return 1;
}

int reuse_sides(session *s, const engine *const e[REUSE_SIDES], int fresh, reuse_set *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < REUSE_SIDES && !fresh; k++) {
        if (!e[k])
            continue;
        int rc = reuse_find(s, e[k], &out->run[k]);
        if (rc < 0)
            return rc;
        out->found[k] = rc;
    }
    return 0;
}

const join_result *reuse_res(const reuse_set *rs, int k)
{
    return rs->found[k] ? &rs->run[k].res : NULL;
}

void reuse_report(const engine *const e[REUSE_SIDES], const reuse_set *rs)
{
    int any = 0;
    for (int k = 0; k < REUSE_SIDES; k++)
        if (e[k] && rs->found[k]) {
            /* The same engine on two sides is one reused run. */
            int dup = 0;
            for (int j = 0; j < k; j++)
                dup |= e[j] == e[k] && rs->found[j];
            if (dup)
                continue;
            out_printf("  reused run %lld of %s (%s): same data, eps and options\n",
                       (long long)rs->run[k].id, e[k]->name, rs->run[k].at);
            any = 1;
        }
    if (any)
        out_printf("  (add fresh to run them again)\n");
}
