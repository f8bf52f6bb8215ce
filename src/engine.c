#include "engine.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "center.h"
#include "devices.h"
#include "dist.h"
#include "err.h"
#include "kernels.h"
#include "nvml.h"

double engine_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double join_spec_eps(const join_spec *s)
{
    return s->mode == JOIN_HIST ? sqrt(s->hist_edges[s->hist_nbins]) : s->eps;
}

double engine_tflops(double nq, double n, double d, double seconds)
{
    if (seconds <= 0)
        return 0;
    return 2.0 * nq * n * d / seconds / 1e12;
}

double engine_pairs_examined(const join_result *r, double nq, double n, int *pruned)
{
    const double x = join_result_metric_value(r, "pairs_examined");
    *pruned = !isnan(x);
    return *pruned ? x : nq * n;
}

double engine_selectivity(uint64_t pairs, size_t nq)
{
    if (nq == 0)
        return 0;
    return ((double)pairs - (double)nq) / (double)nq;
}

void join_result_phase(join_result *r, const char *name, double seconds)
{
    for (int k = 0; k < r->nphase; k++)
        if (strcmp(r->phase[k].name, name) == 0) {
            r->phase[k].seconds += seconds;
            return;
        }
    if (r->nphase < JOIN_MAX_PHASES) {
        r->phase[r->nphase].name = name;
        r->phase[r->nphase].seconds = seconds;
        r->nphase++;
    }
}

void join_result_metric(join_result *r, const char *name, double value, const char *unit)
{
    if (r->nmetric >= JOIN_MAX_METRICS)
        return;
    join_metric *m = &r->metric[r->nmetric++];
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->unit, sizeof m->unit, "%s", unit ? unit : "");
    m->value = value;
}

double join_result_metric_value(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nmetric; k++)
        if (strcmp(r->metric[k].name, name) == 0)
            return r->metric[k].value;
    return NAN;
}

/* Whether an NVIDIA kernel driver is present (Linux, or WSL's GPU device).
 * Without one the CUDA runtime can only say "driver version is
 * insufficient", which reads like an upgrade is needed. */
static int engine_driver_loaded(void)
{
    return access("/proc/driver/nvidia/version", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0 ||
           access("/dev/dxg", F_OK) == 0;
}

int engine_run(const engine *e, const join_spec *s, join_result *res)
{
    memset(res, 0, sizeof *res);
    /* tcjoin-mpi: the run shared by every rank (src/cli/mpi_run.c), which
     * calls back here for each of its parts (DIST_LOCAL). */
    if (dist && dist->join) {
        int drc = dist->join(e, s, res);
        if (drc != DIST_LOCAL)
            return drc;
    }
    if (!s->ds || s->ds->n == 0)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    if (s->q0 > s->q1 || s->q1 > s->ds->n)
        return err_set(TCJ_EINVAL, "query rows [%zu, %zu) outside the dataset's %zu rows", s->q0,
                       s->q1, s->ds->n);
    if (s->ds->n > UINT32_MAX)
        return err_set(TCJ_EINVAL, "%zu points: at most 2^32-1 are supported", s->ds->n);
    if (s->mode == JOIN_HIST) {
        if (!s->hist_edges || s->hist_nbins == 0 || !s->hist || !s->hist_below)
            return err_set(TCJ_EINVAL, "histogram mode needs edges and bins");
        for (size_t b = 0; b < s->hist_nbins; b++)
            if (!(s->hist_edges[b] <= s->hist_edges[b + 1]))
                return err_set(TCJ_EINVAL, "histogram edges must ascend");
    } else if (!(s->eps > 0) || !isfinite(s->eps)) {
        return err_set(TCJ_EINVAL, "eps must be a positive number (got %g)", s->eps);
    }
    if (s->mode == JOIN_PERPOINT && !s->counts)
        return err_set(TCJ_EINVAL, "per-point mode needs a counts array");
    if (s->mode == JOIN_PAIRS && !s->sink.put)
        return err_set(TCJ_EINVAL, "pair mode needs a sink");
    int rc = engine_available(e, s->opts);
    if (rc)
        return rc;
    /* Per-cell centring is the CPU emulations' (src/cpu_emul_local.c);
     * the exact engines are exact either way and take auto's choice. */
    if (s->opts && s->opts->center == CENTER_LOCAL && e->centers == 1 && !e->exact)
        return err_set(TCJ_EINVAL,
                       "center local: %s centres the whole dataset only (set center on or auto); "
                       "per-cell centring is the CPU emulations' (cpu-fp16, cpu-bf16, cpu-tf32)",
                       e->name);
    snprintf(res->precision, sizeof res->precision, "%s", e->precision);
    res->d_padded = s->ds->d;
    /* GPU runs are sampled by NVML (clocks, power, throttling) so every
     * stored GPU run says at what clock it ran; without NVML nothing is
     * added (N/A, not 0). */
    int sdev[KERN_MAX_DEVICES]; /* a `set devices` list: every device of it */
    const int nsdev = devices_resolve(s->opts, sdev);
    if (nsdev == 0)
        sdev[0] = s->opts ? s->opts->device : 0;
    int sampling = e->gpu && !s->inner && nvml_sampler_start_list(sdev, nsdev ? nsdev : 1, 20) == 0;
    if (e->gpu && !s->inner && !sampling)
        err_clear();
    /* The engine sees which row it runs for (tensor-core formats share one
     * run function and read their format from the row). */
    join_spec sr = *s;
    sr.engine = e;
    double t0 = engine_now();
    rc = e->run(&sr, res);
    res->seconds = engine_now() - t0;
    kern_trace_mark("engine: run done");
    if (sampling) {
        nvml_stats st;
        nvml_sampler_stop(&st);
        nvml_add_metrics(res, &st);
        /* Over two or more devices each one's figures too; the plain
         * names stay the first device's (the clocks panel reads them). */
        nvml_stats each[NVML_MAX_DEVS];
        int devs[NVML_MAX_DEVS];
        const int nd = nvml_sampler_devices(each, devs, NVML_MAX_DEVS);
        for (int k = 0; nd > 1 && k < nd; k++)
            nvml_add_metrics_dev(res, &each[k], devs[k]);
    }
    return rc;
}

const char *engine_dist_name(engine_dist d)
{
    switch (d) {
    case ENGINE_DIST_FP32:
        return "fp32";
    case ENGINE_DIST_FP64:
        return "fp64";
    default:
        return "?";
    }
}

const engine *engine_kdist_pick(const engine *first, const engine_opts *o)
{
    const engine *e = first && first->kdist && engine_available(first, o) == 0 ? first : NULL;
    for (const engine *const *t = engine_table; !e && *t; t++)
        if ((*t)->kdist && (*t)->exact && engine_available(*t, o) == 0)
            e = *t;
    err_clear();
    return e;
}

int engine_available(const engine *e, const engine_opts *o)
{
    if (!e->format) {
        if (e->available)
            return e->available(o);
        /* A GPU row whose format a build without CUDA leaves NULL: the
         * device check says why it cannot run. */
        return e->gpu ? engine_gpu_device(e->name, o, NULL) : 0;
    }
    /* A tensor-core format: the device must exist and have the compute
     * capability of the format's MMA. */
    kern_device dv;
    int rc = engine_gpu_device(e->name, o, &dv);
    if (rc)
        return rc;
    const int cc = dv.major * 10 + dv.minor;
    if (cc < e->format->min_cc)
        return err_set(TCJ_ENODEV, "%s: %s (sm_%d) is too old; %s needs sm_%d or newer", e->name,
                       dv.name, cc, e->format->name, e->format->min_cc);
    return 0;
}

const engine *engine_best(engine_role role, const engine_opts *o)
{
    return engine_best_of(engine_table, role, o);
}

const engine *engine_best_of(const engine *const *table, engine_role role, const engine_opts *o)
{
    const engine *best = NULL;
    for (const engine *const *t = table; *t; t++) {
        const engine *e = *t;
        if (e->rank[role] <= 0 || (best && e->rank[role] <= best->rank[role]))
            continue;
        if (engine_available(e, o) == 0)
            best = e;
    }
    err_clear();
    return best;
}

int engine_gpu_device(const char *who, const engine_opts *o, kern_device *dv)
{
    int dev = o ? o->device : 0;
    /* No GPU here and no CUDA in the build: both said, the GPU first. */
    if (!kern_built_with_cuda() && !engine_driver_loaded())
        return err_set(TCJ_ENODEV, "%s needs an NVIDIA GPU; none found (no driver loaded); %s", who,
                       kern_error());
    if (!kern_built_with_cuda())
        return err_set(TCJ_ENODEV, "%s: %s", who, kern_error());
    int n = kern_device_count();
    if (n <= 0 && !engine_driver_loaded())
        return err_set(TCJ_ENODEV, "%s needs an NVIDIA GPU; none found (no driver loaded)", who);
    if (n <= 0)
        return err_set(TCJ_ENODEV, "%s: %s", who, kern_error());
    /* `set devices`: every listed device must exist; the first stands
     * for them (a list of GPUs of one kind, kernels/kern_multi.cu). */
    int list[KERN_MAX_DEVICES];
    const int nl = devices_resolve(o, list);
    for (int t = 0; t < nl; t++)
        if (list[t] >= n)
            return err_set(TCJ_ENODEV,
                           "%s: no CUDA device %d (this machine has %d: 0..%d; set devices)", who,
                           list[t], n, n - 1);
    if (nl > 0)
        dev = list[0];
    if (dev < 0 || dev >= n)
        return err_set(TCJ_ENODEV,
                       "%s: no CUDA device %d (this machine has %d: 0..%d; set device N)", who, dev,
                       n, n - 1);
    kern_device tmp;
    if (kern_device_info(dev, dv ? dv : &tmp) != 0)
        return err_set(TCJ_ENODEV, "%s: CUDA device %d: %s", who, dev, kern_error());
    return 0;
}

int engine_gpu_fp64_tc(const char *who, const engine_opts *o)
{
    kern_device dv;
    int rc = engine_gpu_device(who, o, &dv);
    if (rc)
        return rc;
    /* FP64 mma (m8n8k4 DMMA): kernels/'s one predicate for the feature. */
    int cc = dv.major * 10 + dv.minor;
    if (!kern_cc_has_f64_mma(cc))
        return err_set(TCJ_ENODEV, "%s: %s (sm_%d) has no FP64 tensor cores (need sm_80 or sm_90+)",
                       who, dv.name, cc);
    return 0;
}
