/* The host-side run driver shared by the FP64 engines: see f64_common.cuh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "f64_common.cuh"
#include "kern_util.cuh"

static double f64_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void f64_end(f64_run *r)
{
    cudaFree(r->d_count);
    cudaFree(r->d_counts);
    cudaFree(r->d_np);
    cudaFree(r->d_hist);
    cudaFree(r->d_edges);
    cudaFree(r->d_pd);
    cudaFree(r->d_pi);
    cudaFree(r->d_pj);
    cudaFreeHost(r->h_pi);
    cudaFreeHost(r->h_pj);
    cudaFreeHost(r->h_pd);
    if (r->events) {
        cudaEventDestroy(r->e0);
        cudaEventDestroy(r->e1);
    }
    cudaGetLastError();
    memset(r, 0, sizeof *r);
}

static int f64_begin_inner(kern_f64_job *job, f64_run *r, int need_dmma)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return kern_fail(KERN_ENODEV, "no CUDA device%s%s", e != cudaSuccess ? ": " : "",
                         e != cudaSuccess ? cudaGetErrorString(e) : "");
    }
    if (job->device < 0 || job->device >= ndev)
        return kern_fail(KERN_EINVAL, "CUDA device %d does not exist (%d present)", job->device,
                         ndev);
    KERN_CUDA(cudaSetDevice(job->device));
    cudaDeviceProp p;
    KERN_CUDA(cudaGetDeviceProperties(&p, job->device));
    r->cc = p.major * 10 + p.minor;
    r->sms = p.multiProcessorCount;
    snprintf(job->device_name, sizeof job->device_name, "%.96s (sm_%d%d, %d SMs)", p.name, p.major,
             p.minor, p.multiProcessorCount);
    if (need_dmma && !kern_cc_has_f64_mma(r->cc))
        return kern_fail(KERN_ENODEV, "%s has no FP64 tensor cores (sm_%d%d; need sm_80 or sm_90+)",
                         p.name, p.major, p.minor);
    if (job->x == NULL || job->n == 0 || job->d == 0 || job->q0 > job->q1 || job->q1 > job->n)
        return kern_fail(KERN_EINVAL, "bad FP64 job (n %zu, d %zu, rows [%zu, %zu))", job->n,
                         job->d, job->q0, job->q1);
    r->nq = job->q1 - job->q0;
    KERN_CUDA(cudaEventCreate(&r->e0));
    KERN_CUDA(cudaEventCreate(&r->e1));
    r->events = 1;

    f64_out &o = r->out;
    o.mode = job->mode;
    o.q0 = job->q0;
    o.eps2 = job->eps * job->eps;
    KERN_CUDA(cudaMalloc(&r->d_count, sizeof(unsigned long long)));
    KERN_CUDA(cudaMemset(r->d_count, 0, sizeof(unsigned long long)));
    o.count = r->d_count;
    if (job->mode == KF64_PERPOINT) {
        if (!job->counts)
            return kern_fail(KERN_EINVAL, "per-point mode needs a counts array");
        size_t b = (r->nq ? r->nq : 1) * sizeof(unsigned long long);
        KERN_CUDA(cudaMalloc(&r->d_counts, b));
        KERN_CUDA(cudaMemset(r->d_counts, 0, b));
        o.counts = r->d_counts;
    } else if (job->mode == KF64_PAIRS) {
        if (!job->pair_fn)
            return kern_fail(KERN_EINVAL, "pair mode needs a callback");
        if (job->batch_pairs == 0)
            job->batch_pairs = (size_t)1 << 22;
        /* The device buffer holds at least 1024 pairs so that a work item
         * of one query row stays small; the host hands out batch_pairs. */
        r->cap = job->batch_pairs < 1024 ? 1024 : job->batch_pairs;
        KERN_CUDA(cudaMalloc(&r->d_pi, r->cap * sizeof(uint32_t)));
        KERN_CUDA(cudaMalloc(&r->d_pj, r->cap * sizeof(uint32_t)));
        KERN_CUDA(cudaMalloc(&r->d_pd, r->cap * sizeof(double)));
        KERN_CUDA(cudaMalloc(&r->d_np, sizeof(unsigned long long)));
        KERN_CUDA(cudaMallocHost(&r->h_pi, r->cap * sizeof(uint32_t)));
        KERN_CUDA(cudaMallocHost(&r->h_pj, r->cap * sizeof(uint32_t)));
        KERN_CUDA(cudaMallocHost(&r->h_pd, r->cap * sizeof(double)));
        o.pi = r->d_pi;
        o.pj = r->d_pj;
        o.pd = r->d_pd;
        o.np = r->d_np;
        o.cap = r->cap;
    } else if (job->mode == KF64_HIST) {
        if (!job->hist_edges || job->hist_nbins == 0 || !job->hist || !job->hist_below)
            return kern_fail(KERN_EINVAL, "histogram mode needs edges and bins");
        size_t nb = job->hist_nbins;
        KERN_CUDA(cudaMalloc(&r->d_edges, (nb + 1) * sizeof(double)));
        KERN_CUDA(cudaMemcpy(r->d_edges, job->hist_edges, (nb + 1) * sizeof(double),
                             cudaMemcpyHostToDevice));
        KERN_CUDA(cudaMalloc(&r->d_hist, (nb + 1) * sizeof(unsigned long long)));
        KERN_CUDA(cudaMemset(r->d_hist, 0, (nb + 1) * sizeof(unsigned long long)));
        o.edges = r->d_edges;
        o.nbins = (int)nb;
        o.hist = r->d_hist;
        o.eps2 = job->hist_edges[nb];
    } else if (job->mode != KF64_COUNT) {
        return kern_fail(KERN_EINVAL, "unknown output mode %d", job->mode);
    }
    return 0;
}

int f64_begin(kern_f64_job *job, f64_run *r, int need_dmma)
{
    memset(r, 0, sizeof *r);
    r->job = job;
    job->pairs = 0;
    job->t_h2d = job->t_prep = job->t_kernel = job->t_d2h = job->t_sink = 0;
    job->variant[0] = 0;
    int rc = f64_begin_inner(job, r, need_dmma);
    if (rc) {
        f64_end(r);
        r->job = job;
    }
    return rc;
}

int f64_upload(f64_run *r, const double *x, size_t n, size_t d, size_t dp, const int *perm,
               double **out)
{
    double t0 = f64_now();
    *out = NULL;
    /* Pad and permute on the host in slabs, so the host copy stays small. */
    size_t slab = ((size_t)1 << 22) / dp + 1;
    double *h = NULL;
    KERN_CUDA(cudaMalloc(out, n * dp * sizeof(double) + 64));
    KERN_CUDA(cudaMallocHost(&h, (slab < n ? slab : n) * dp * sizeof(double)));
    for (size_t r0 = 0; r0 < n; r0 += slab) {
        size_t r1 = r0 + slab < n ? r0 + slab : n;
        for (size_t i = r0; i < r1; i++) {
            double *dst = h + (i - r0) * dp;
            const double *src = x + i * d;
            for (size_t k = 0; k < d; k++)
                dst[k] = src[perm ? (size_t)perm[k] : k];
            for (size_t k = d; k < dp; k++)
                dst[k] = 0;
        }
        cudaError_t e =
            cudaMemcpy(*out + r0 * dp, h, (r1 - r0) * dp * sizeof(double), cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            cudaFreeHost(h);
            return kern_cuda_fail(e, "cudaMemcpy(points)", __FILE__, __LINE__);
        }
    }
    cudaFreeHost(h);
    r->job->t_h2d += f64_now() - t0;
    return 0;
}

/* Copy k pairs back and hand them out in batches of batch_pairs. */
static int f64_drain(f64_run *r, size_t k)
{
    kern_f64_job *job = r->job;
    double t0 = f64_now();
    KERN_CUDA(cudaMemcpy(r->h_pi, r->d_pi, k * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    KERN_CUDA(cudaMemcpy(r->h_pj, r->d_pj, k * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    KERN_CUDA(cudaMemcpy(r->h_pd, r->d_pd, k * sizeof(double), cudaMemcpyDeviceToHost));
    double t1 = f64_now();
    job->t_d2h += t1 - t0;
    for (size_t s = 0; s < k; s += job->batch_pairs) {
        size_t m = k - s < job->batch_pairs ? k - s : job->batch_pairs;
        if (job->pair_fn(job->pair_ctx, m, r->h_pi + s, r->h_pj + s, r->h_pd + s)) {
            job->t_sink += f64_now() - t1;
            return kern_fail(KERN_ESINK, "the pair sink stopped the run");
        }
    }
    r->drained += k;
    job->t_sink += f64_now() - t1;
    return 0;
}

static int f64_launch_timed(f64_run *r, const f64_item *it, f64_launch_fn fn, void *user)
{
    if (r->job->mode == KF64_PAIRS)
        KERN_CUDA(cudaMemsetAsync(r->d_np, 0, sizeof(unsigned long long)));
    KERN_CUDA(cudaEventRecord(r->e0));
    int rc = fn(r, it, user);
    if (rc)
        return rc;
    KERN_LAUNCH_CHECK("kernel");
    KERN_CUDA(cudaEventRecord(r->e1));
    KERN_CUDA(cudaEventSynchronize(r->e1));
    float ms = 0;
    KERN_CUDA(cudaEventElapsedTime(&ms, r->e0, r->e1));
    r->job->t_kernel += 1e-3 * ms;
    return 0;
}

int f64_drive(f64_run *r, const f64_item *items, size_t nitems, f64_launch_fn fn, void *user)
{
    kern_f64_job *job = r->job;
    size_t cap = 64, top = 0;
    f64_item *stack = (f64_item *)malloc(cap * sizeof *stack);
    if (!stack)
        return kern_fail(KERN_EGPU, "out of memory");
    int rc = 0;
    /* Progress: candidate-row pairs of the items done (a split item counts
     * when its pieces are done). */
    double total = 0, done = 0;
    for (size_t i = 0; i < nitems; i++)
        total += (double)(items[i].qb - items[i].qa) * (double)(items[i].cb - items[i].ca);
    for (size_t i = 0; i < nitems && rc == 0; i++) {
        stack[0] = items[i];
        top = 1;
        while (top > 0 && rc == 0) {
            if (job->cancel && *job->cancel) {
                rc = kern_fail(KERN_ECANCEL, "cancelled");
                break;
            }
            f64_item it = stack[--top];
            if (it.qa >= it.qb || it.ca >= it.cb)
                continue;
            rc = f64_launch_timed(r, &it, fn, user);
            const double work = (double)(it.qb - it.qa) * (double)(it.cb - it.ca);
            if (rc == 0 && job->mode != KF64_PAIRS) {
                done += work;
                if (job->progress && total > 0)
                    job->progress(job->progress_ctx, done / total);
            }
            if (rc || job->mode != KF64_PAIRS)
                continue;
            unsigned long long np = 0;
            cudaError_t e = cudaMemcpy(&np, r->d_np, sizeof np, cudaMemcpyDeviceToHost);
            if (e != cudaSuccess) {
                rc = kern_cuda_fail(e, "cudaMemcpy(pair count)", __FILE__, __LINE__);
                break;
            }
            if (np <= r->cap) {
                rc = f64_drain(r, (size_t)np);
                done += work;
                if (rc == 0 && job->progress && total > 0)
                    job->progress(job->progress_ctx, done / total);
                continue;
            }
            /* Overflow: a batch boundary. Split into pieces expected to fit
             * (queries first, then candidates) and compute them again. */
            size_t want = (size_t)((2 * np + r->cap - 1) / r->cap);
            int by_q = it.qb - it.qa > 1;
            size_t len = by_q ? it.qb - it.qa : it.cb - it.ca;
            size_t parts = want < 2 ? 2 : want;
            if (parts > len)
                parts = len;
            if (top + parts > cap) {
                cap = (top + parts) * 2;
                f64_item *ns = (f64_item *)realloc(stack, cap * sizeof *stack);
                if (!ns) {
                    rc = kern_fail(KERN_EGPU, "out of memory");
                    break;
                }
                stack = ns;
            }
            /* Pushed last piece first so pieces run in order. */
            for (size_t p = parts; p-- > 0;) {
                f64_item s = it;
                size_t a = len * p / parts, b = len * (p + 1) / parts;
                if (by_q) {
                    s.qa = it.qa + a;
                    s.qb = it.qa + b;
                } else {
                    s.ca = it.ca + a;
                    s.cb = it.ca + b;
                }
                stack[top++] = s;
            }
        }
    }
    free(stack);
    return rc;
}

int f64_finish(f64_run *r)
{
    kern_f64_job *job = r->job;
    double t0 = f64_now();
    unsigned long long total = 0;
    if (job->mode == KF64_COUNT) {
        KERN_CUDA(cudaMemcpy(&total, r->d_count, sizeof total, cudaMemcpyDeviceToHost));
    } else if (job->mode == KF64_PERPOINT) {
        if (r->nq) {
            KERN_CUDA(cudaMemcpy(job->counts, r->d_counts, r->nq * sizeof(uint64_t),
                                 cudaMemcpyDeviceToHost));
        }
        for (size_t i = 0; i < r->nq; i++)
            total += job->counts[i];
    } else if (job->mode == KF64_PAIRS) {
        total = r->drained;
    } else {
        size_t nb = job->hist_nbins;
        unsigned long long *h = (unsigned long long *)malloc((nb + 1) * sizeof *h);
        if (!h)
            return kern_fail(KERN_EGPU, "out of memory");
        cudaError_t e = cudaMemcpy(h, r->d_hist, (nb + 1) * sizeof *h, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            free(h);
            return kern_cuda_fail(e, "cudaMemcpy(hist)", __FILE__, __LINE__);
        }
        *job->hist_below = h[0];
        total = h[0];
        for (size_t b = 0; b < nb; b++) {
            job->hist[b] = h[b + 1];
            total += h[b + 1];
        }
        free(h);
    }
    job->pairs = total;
    job->t_d2h += f64_now() - t0;
    return 0;
}

size_t f64_brute_items(const kern_f64_job *job, size_t chunk, int symmetric, f64_item **items)
{
    size_t q0 = job->q0, q1 = job->q1, n = job->n;
    size_t nqc = (q1 - q0 + chunk - 1) / chunk;
    if (job->mode == KF64_PAIRS)
        symmetric = 0;
    if (!symmetric) {
        *items = (f64_item *)malloc((nqc ? nqc : 1) * sizeof(f64_item));
        for (size_t i = 0; i < nqc; i++) {
            size_t a = q0 + i * chunk, b = a + chunk < q1 ? a + chunk : q1;
            (*items)[i] = f64_item{a, b, 0, n, 0};
        }
        return nqc;
    }
    /* Candidate chunks: those of the query range (mirrored among
     * themselves) plus plain chunks before q0 and after q1. */
    size_t nlo = (q0 + chunk - 1) / chunk, nhi = (n - q1 + chunk - 1) / chunk;
    size_t max = nqc * (nqc + nlo + nhi) + 1, k = 0;
    f64_item *it = (f64_item *)malloc(max * sizeof(f64_item));
    for (size_t i = 0; i < nqc; i++) {
        size_t a = q0 + i * chunk, b = a + chunk < q1 ? a + chunk : q1;
        for (size_t j = i; j < nqc; j++) {
            size_t c = q0 + j * chunk, e = c + chunk < q1 ? c + chunk : q1;
            it[k++] = f64_item{a, b, c, e, j == i ? 1 : 2};
        }
        for (size_t c = 0; c < q0; c += chunk)
            it[k++] = f64_item{a, b, c, c + chunk < q0 ? c + chunk : q0, 0};
        for (size_t c = q1; c < n; c += chunk)
            it[k++] = f64_item{a, b, c, c + chunk < n ? c + chunk : n, 0};
    }
    *items = it;
    return k;
}
