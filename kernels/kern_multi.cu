/* Several GPUs of one host: the range queue and the runner (kern_multi.cuh). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <thread>
#include <vector>

#include "kern_multi.cuh"
#include "kern_util.cuh"

int kern_queue_open(kern_queue *q, int dev, unsigned long long total, const char *variant)
{
    std::lock_guard<std::mutex> g(q->m);
    if (!q->opened) {
        q->opened = 1;
        q->total = total;
        q->open_dev = dev;
        snprintf(q->variant, sizeof q->variant, "%s", variant);
        if (q->ext) {
            /* Once a list for the process: its devices are checked below. */
            char why[400] = "";
            if (q->ext->open(q->ext->ctx, total, variant, &q->ext_list, why, sizeof why)) {
                q->stop = 1;
                return kern_fail(KERN_EINVAL, "%s", why[0] ? why : "the work lists differ");
            }
        }
        return 0;
    }
    if (q->total != total || strcmp(q->variant, variant) != 0)
        return kern_fail(KERN_EINVAL,
                         "devices %d and %d run different kernels (%s, %llu items; %s, %llu "
                         "items): set devices lists GPUs of one kind",
                         q->open_dev, dev, q->variant, q->total, variant, total);
    return 0;
}

int kern_queue_take(kern_queue *q, unsigned long long least, unsigned long long most,
                    unsigned long long *b, unsigned long long *e)
{
    if (q->ext) {
        if (q->stop || !q->ext->take(q->ext->ctx, q->ext_list, least, most, q->ndev, b, e))
            return 0;
        return *e > *b;
    }
    const unsigned long long total = q->total;
    unsigned long long at = q->next.load();
    for (;;) {
        if (at >= total)
            return 0;
        /* A quarter of what is left per device, within [least, most]: the
         * last ranges are short, so the devices finish close together. */
        unsigned long long c = (total - at) / (4ull * (unsigned long long)q->ndev);
        c = std::max(least, std::min(most, c));
        c = std::max(c, 1ull);
        const unsigned long long to = std::min(total, at + c);
        if (q->next.compare_exchange_weak(at, to)) {
            *b = at;
            *e = to;
            return 1;
        }
    }
}

void kern_queue_publish(kern_queue *q, const kern_shared_ds *ds)
{
    std::lock_guard<std::mutex> g(q->up_m);
    q->up = *ds;
    q->up_cv.notify_all();
}

int kern_queue_shared(kern_queue *q, kern_shared_ds *out)
{
    std::unique_lock<std::mutex> g(q->up_m);
    /* q->stop is set by the runner when a device fails (the source among
     * them, before it could publish) or on cancel: never wait past it. */
    while (q->up.state == 0 && !q->stop)
        q->up_cv.wait_for(g, std::chrono::milliseconds(5));
    if (q->up.state == 0)
        return kern_fail(KERN_ECANCEL, "cancelled");
    *out = q->up;
    return q->up.state > 0;
}

/* The one sink of a run over several devices: the devices' drains call it
 * one at a time; after a refusal it refuses every later batch. */
struct kern_multi_sink {
    std::mutex m;
    kern_pair_fn fn;
    void *ctx;
    int failed;
};

static int kern_multi_put(void *ctx, size_t k, const uint32_t *i, const uint32_t *j,
                          const double *d2)
{
    kern_multi_sink *s = (kern_multi_sink *)ctx;
    std::lock_guard<std::mutex> g(s->m);
    if (s->failed)
        return 1;
    int rc = s->fn(s->ctx, k, i, j, d2);
    if (rc)
        s->failed = 1;
    return rc;
}

/* One device's thread: its arguments, result and outcome. */
struct kern_multi_dev {
    kern_join_args a;
    kern_join_result r;
    unsigned long long items;
    std::vector<uint64_t> counts, hist;
    uint64_t below;
    int rc;
    char msg[512];
};

static int kern_multi_check(const kern_join_args *a)
{
    if (a->ndevices < 1 || a->ndevices > KERN_MAX_DEVICES)
        return kern_fail(KERN_EINVAL, "1 to %d devices, got %d", KERN_MAX_DEVICES, a->ndevices);
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return kern_fail(KERN_ENODEV, "no CUDA device%s%s", e != cudaSuccess ? ": " : "",
                         e != cudaSuccess ? cudaGetErrorString(e) : "");
    }
    for (int t = 0; t < a->ndevices; t++) {
        const int dv = a->devices[t];
        if (dv < 0 || dv >= ndev)
            return kern_fail(KERN_ENODEV, "CUDA device %d does not exist (%d present; set devices)",
                             dv, ndev);
        for (int u = 0; u < t; u++)
            if (a->devices[u] == dv)
                return kern_fail(KERN_EINVAL, "device %d is listed twice (set devices)", dv);
    }
    return 0;
}

/* "NVIDIA H200 (sm_90, 132 SMs) x2", or the names joined with " + " when
 * the devices differ. */
static void kern_multi_name(const std::vector<kern_multi_dev> &dv, char *out, size_t size)
{
    bool same = true;
    for (const auto &d : dv)
        same = same && strcmp(d.r.device_name, dv[0].r.device_name) == 0;
    if (same) {
        snprintf(out, size, "%.100s x%zu", dv[0].r.device_name, dv.size());
        return;
    }
    size_t k = 0;
    out[0] = '\0';
    for (size_t t = 0; t < dv.size() && k < size; t++)
        k += (size_t)snprintf(out + k, size - k, "%s%s", t ? " + " : "", dv[t].r.device_name);
}

/* r from the devices' results: phases the longest device's (they ran side
 * by side), counts summed. */
static void kern_multi_merge(std::vector<kern_multi_dev> &dv, kern_join_result *r)
{
    const kern_join_result &r0 = dv[0].r;
    r->convert_name = r0.convert_name;
    r->prep_name = r0.prep_name;
    r->d_padded = r0.d_padded;
    r->symmetric = r0.symmetric;
    r->off = r0.off;
    r->pair_cap = r0.pair_cap;
    r->centred = r0.centred;
    snprintf(r->variant, sizeof r->variant, "%s", r0.variant);
    kern_multi_name(dv, r->device_name, sizeof r->device_name);
    r->cache_hit = 1;
    r->ndevices = (int)dv.size();
    for (size_t t = 0; t < dv.size(); t++) {
        const kern_join_result &x = dv[t].r;
        r->pairs += x.pairs;
        r->examined += x.examined;
        r->skipped += x.skipped;
        r->t_h2d = std::max(r->t_h2d, x.t_h2d);
        r->t_convert = std::max(r->t_convert, x.t_convert);
        r->t_prep = std::max(r->t_prep, x.t_prep);
        r->t_kernel = std::max(r->t_kernel, x.t_kernel);
        r->t_d2h = std::max(r->t_d2h, x.t_d2h);
        r->t_sink = std::max(r->t_sink, x.t_sink);
        r->cache_hit = r->cache_hit && x.cache_hit;
        r->launches += x.launches;
        r->refills += x.refills;
        r->mem_peak = std::max(r->mem_peak, x.mem_peak);
        r->shrunk = r->shrunk || x.shrunk;
        const double tr = std::max(r->ex.t_refine, x.ex.t_refine);
        kern_exact_add(&r->ex, &x.ex);
        r->ex.t_refine = tr; /* as t_kernel: the devices refine side by side */
        kern_device_share &s = r->share[t];
        s.device = dv[t].a.device;
        s.items = dv[t].items;
        s.launches = x.launches;
        s.t_kernel = x.t_kernel;
        s.pairs = x.pairs;
    }
}

int kern_multi_run(const kern_join_args *a0, kern_join_result *r, kern_multi_fn one)
{
    memset(r, 0, sizeof *r);
    /* A run shared with other processes on its one device: a list of it. */
    kern_join_args one_dev;
    const kern_join_args *a = a0;
    if (a0->ndevices == 0 && a0->tiles) {
        one_dev = *a0;
        one_dev.ndevices = 1;
        one_dev.devices[0] = a0->device;
        a = &one_dev;
    }
    int rc = kern_multi_check(a);
    if (rc)
        return rc;
    const int nd = a->ndevices;
    const size_t nq = a->q1 > a->q0 ? a->q1 - a->q0 : 0;
    /* Process-wide lookups (the wgmma probe and its driver entry point)
     * are cached here, before the threads read them. */
    for (int t = 0; t < nd; t++)
        kern_device_has_wgmma(a->devices[t]);
    kern_queue q;
    q.ndev = nd;
    q.ext = a->tiles;
    kern_multi_sink sink;
    sink.fn = a->pair_fn;
    sink.ctx = a->pair_ctx;
    sink.failed = 0;
    std::vector<kern_multi_dev> dv(nd);
    for (int t = 0; t < nd; t++) {
        kern_multi_dev &d = dv[t];
        memset(&d.r, 0, sizeof d.r);
        d.a = *a;
        d.a.ndevices = 0;
        d.a.device = a->devices[t];
        d.a.cancel = &q.stop;
        d.a.progress = NULL; /* the calling thread reports progress */
        d.items = 0;
        d.below = 0;
        d.rc = 0;
        d.msg[0] = '\0';
        /* The first device fills the caller's arrays; the others their own,
         * added in at the end. */
        if (a->mode == KJOIN_PERPOINT && t > 0) {
            d.counts.assign(std::max(nq, (size_t)1), 0);
            d.a.counts = d.counts.data();
        }
        if (a->mode == KJOIN_HIST && t > 0) {
            d.hist.assign(a->hist_nbins, 0);
            d.a.hist = d.hist.data();
            d.a.hist_below = &d.below;
        }
        if (a->mode == KJOIN_PAIRS) {
            d.a.pair_fn = kern_multi_put;
            d.a.pair_ctx = &sink;
        }
    }
    std::mutex m;
    std::condition_variable cv;
    int running = nd;
    /* A cancel already set stops every device before its first launch, as
     * it stops the one-device loop; later ones are copied below. */
    if (a->cancel && *a->cancel)
        q.stop = 1;
    std::vector<std::thread> th;
    for (int t = 0; t < nd; t++)
        th.emplace_back([&, t] {
            kern_multi_dev &d = dv[t];
            d.rc = one(&d.a, &d.r, &q, &d.items);
            if (d.rc)
                snprintf(d.msg, sizeof d.msg, "%s", kern_error());
            if (d.rc && d.rc != KERN_ECANCEL)
                q.stop = 1; /* the others stop at their next launch */
            std::lock_guard<std::mutex> g(m);
            running--;
            cv.notify_all();
        });
    double last = -1;
    {
        std::unique_lock<std::mutex> g(m);
        while (running > 0) {
            cv.wait_for(g, std::chrono::milliseconds(10));
            if (a->cancel && *a->cancel)
                q.stop = 1;
            if (a->progress && q.total) {
                const double f = (double)q.done.load() / (double)q.total;
                if (f != last) {
                    last = f;
                    g.unlock();
                    a->progress(a->progress_ctx, std::min(f, 1.0));
                    g.lock();
                }
            }
        }
    }
    for (auto &x : th)
        x.join();
    /* A device's own failure before the cancels it caused in the others. */
    int bad = -1;
    for (int t = 0; t < nd; t++)
        if (dv[t].rc && (bad < 0 || (dv[bad].rc == KERN_ECANCEL && dv[t].rc != KERN_ECANCEL)))
            bad = t;
    kern_multi_merge(dv, r);
    if (a0->ndevices == 0) {
        /* The device alone, as its run would name it. */
        snprintf(r->device_name, sizeof r->device_name, "%s", dv[0].r.device_name);
        r->ndevices = 0;
    }
    if (bad >= 0) {
        if (dv[bad].rc == KERN_ECANCEL)
            return kern_fail(KERN_ECANCEL, "cancelled");
        return kern_fail(dv[bad].rc, "device %d: %s", dv[bad].a.device, dv[bad].msg);
    }
    for (int t = 1; t < nd; t++) {
        if (a->mode == KJOIN_PERPOINT)
            for (size_t k = 0; k < nq; k++)
                a->counts[k] += dv[t].counts[k];
        if (a->mode == KJOIN_HIST) {
            for (size_t b = 0; b < a->hist_nbins; b++)
                a->hist[b] += dv[t].hist[b];
            *a->hist_below += dv[t].below;
        }
    }
    return 0;
}
