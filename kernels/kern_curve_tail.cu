/* DBSCAN curve's end on the device (kern_curve_tail.cuh): where no later
 * join is left, the sorts of src/cluster/curve_end.c's curve_end_sorts on the values where they
 * are (the forest's, and the core distances with the reachabilities as
 * one), only the sorted arrays crossing to the host. CUB's radix sort as
 * kern_sort.cu's (the same values, the same order: the forest's among
 * equal weights is free, replay_edges takes a weight's edges whole).
 * Every device array from one allocation of the device's pool. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include <cub/cub.cuh>

#include "kern_consume.cuh"
#include "kern_curve_tail.cuh"

#define KCT_THREADS 256

/* The forest's edges as keys (w) and values (the ends, a << 32 | b). */
static __global__ void kct_split_kernel(const curve_edge *e, size_t m, double *w,
                                        unsigned long long *ab)
{
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < m;
         k += (size_t)gridDim.x * blockDim.x) {
        w[k] = e[k].w;
        ab[k] = (unsigned long long)e[k].a << 32 | e[k].b;
    }
}

/* The core distances and reachabilities as one sort's keys: both are
 * squared distances (+0 to +inf), whose bits order as their values do, so
 * with the sign bit set on the reachabilities' (their bits of -r) every
 * core distance sorts first and each half ascending: one sort's dozen
 * launches instead of two (CUB's onesweep: a histogram, a scan and a
 * launch a byte), whose queueing was most of the end's host time. */
static __global__ void kct_keys_kernel(const double *core, const double *reach, size_t n,
                                       unsigned long long *key)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        key[i] = (unsigned long long)__double_as_longlong(fabs(core[i]));
        key[n + i] = (unsigned long long)__double_as_longlong(fabs(reach[i])) | 1ull << 63;
    }
}

static __global__ void kct_unsign_kernel(unsigned long long *key, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        key[i] &= ~(1ull << 63);
}

/* The arrays, carved from one allocation at 256-byte boundaries. */
struct kct_room {
    double *reach; /* n where the reachabilities come from the host */
    double *w0, *w1;
    unsigned long long *ab0, *ab1, *k0, *k1;
    void *tmp[2]; /* CUB's, a sort each (they run side by side) */
};

static size_t kct_carve(kct_room *r, char *base, size_t n, size_t nf, int reach, size_t tmp)
{
    size_t at = 0;
    auto take = [&](size_t bytes) {
        void *p = base ? base + at : NULL;
        at += (bytes + 255) / 256 * 256;
        return p;
    };
    r->reach = reach ? (double *)take(n * 8) : NULL;
    r->w0 = (double *)take(nf * 8);
    r->w1 = (double *)take(nf * 8);
    r->ab0 = (unsigned long long *)take(nf * 8);
    r->ab1 = (unsigned long long *)take(nf * 8);
    r->k0 = (unsigned long long *)take(2 * n * 8);
    r->k1 = (unsigned long long *)take(2 * n * 8);
    for (int q = 0; q < 2; q++)
        r->tmp[q] = take(tmp);
    return at;
}

/* CUB's temporary bytes for a sort (the larger of the two). */
static int kct_tmp(size_t n, size_t nf, size_t *tmp)
{
    size_t a = 0, b = 0;
    KERN_CUDA(cub::DeviceRadixSort::SortKeys(NULL, a, (const unsigned long long *)NULL,
                                             (unsigned long long *)NULL, (int)(2 * n)));
    if (nf)
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b, (const double *)NULL, (double *)NULL,
                                                  (const unsigned long long *)NULL,
                                                  (unsigned long long *)NULL, (int)nf));
    *tmp = std::max(a, b);
    return 0;
}

/* What the end keeps between curves: two streams a device (created
 * once, not again each curve), and one pinned host buffer the sorted
 * arrays come back through. From pageable memory the MNIST-like curve's
 * 1.7 MB take most of its end's time, as the driver
 * stages such a copy through its own buffers one after another; pinned,
 * the copies run at the link's rate and side by side. Kept up to
 * KCT_PIN_KEEP bytes (the arrays of 2·10^6 rows); larger curves take a
 * buffer of their own for the call, pinned where they can, the copies
 * then a small share of their time. */
#define KCT_PIN_KEEP ((size_t)64 << 20)
static struct {
    char *p;
    size_t bytes;
} g_kct_pin;
static cudaStream_t g_kct_st[KERN_DEV_SLOTS][2];

void kct_release(void)
{
    if (g_kct_pin.p)
        cudaFreeHost(g_kct_pin.p);
    memset(&g_kct_pin, 0, sizeof g_kct_pin);
    int cur = 0;
    cudaGetDevice(&cur);
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        if (g_kct_st[d][0] || g_kct_st[d][1]) {
            cudaSetDevice(d);
            for (int q = 0; q < 2; q++)
                if (g_kct_st[d][q])
                    cudaStreamDestroy(g_kct_st[d][q]);
            memset(g_kct_st[d], 0, sizeof g_kct_st[d]);
        }
    cudaSetDevice(cur);
    cudaGetLastError();
}

/* The current device's two streams (each NULL where one could not be
 * made: the default stream, the work one after another). */
static cudaStream_t *kct_streams(void)
{
    static cudaStream_t none[2] = {NULL, NULL};
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= KERN_DEV_SLOTS) {
        (void)cudaGetLastError();
        return none;
    }
    for (int q = 0; q < 2; q++)
        if (!g_kct_st[dev][q] &&
            cudaStreamCreateWithFlags(&g_kct_st[dev][q], cudaStreamNonBlocking) != cudaSuccess) {
            (void)cudaGetLastError();
            g_kct_st[dev][q] = NULL;
        }
    return g_kct_st[dev];
}

/* bytes of host memory for the copies back: the kept pinned buffer where
 * it fits, else one of the call's own (*own: to kct_host_free), pinned
 * where it can be. */
static int kct_host(size_t bytes, char **p, int *own)
{
    *own = 0;
    if (bytes <= KCT_PIN_KEEP) {
        if (g_kct_pin.bytes < bytes) {
            /* forgotten before a failed free is reported: never freed twice */
            const cudaError_t fe = g_kct_pin.p ? cudaFreeHost(g_kct_pin.p) : cudaSuccess;
            memset(&g_kct_pin, 0, sizeof g_kct_pin);
            if (fe != cudaSuccess)
                return kern_cuda_fail(fe, "cudaFreeHost", __FILE__, __LINE__);
            /* room for a larger curve next time: no regrowth a curve */
            const size_t want = std::min(KCT_PIN_KEEP, bytes + bytes / 2);
            if (cudaMallocHost((void **)&g_kct_pin.p, want) == cudaSuccess)
                g_kct_pin.bytes = want;
            else
                (void)cudaGetLastError(), g_kct_pin.p = NULL;
        }
        if (g_kct_pin.p) {
            *p = g_kct_pin.p;
            return 0;
        }
    }
    if (cudaMallocHost((void **)p, bytes) == cudaSuccess) {
        *own = 1;
        return 0;
    }
    (void)cudaGetLastError();
    if (!(*p = (char *)malloc(bytes)))
        return kern_fail(KERN_ENOMEM, "dbscan curve's end: %.1f MB of host memory refused",
                         (double)bytes / 1e6);
    *own = 2;
    return 0;
}

static void kct_host_free(char *p, int own)
{
    if (own == 1)
        cudaFreeHost(p);
    else if (own == 2)
        free(p);
}

static int kct_run(const kct_in *in, kct_room &r, size_t tmp,
                   void (*take)(void *ctx, int what, const void *v, size_t m), void *ctx)
{
    const size_t n = in->n, nf = in->nf;
    /* what the host holds: the earlier rounds' edges, the reachabilities
     * where the round did not keep them (the sorts below run on streams
     * of their own: these end first) */
    if (in->nhead)
        KERN_CUDA(
            cudaMemcpy(in->forest, in->head, in->nhead * sizeof *in->head, cudaMemcpyHostToDevice));
    const double *reach = in->reach;
    if (!reach) {
        KERN_CUDA(cudaMemcpy(r.reach, in->reach_host, n * 8, cudaMemcpyHostToDevice));
        reach = r.reach;
    }
    if (in->nhead || !in->reach) /* a copy from pageable memory may return before it lands */
        KERN_CUDA(cudaStreamSynchronize(0));
    /* The host's buffer: the forest's weights and ends, then the core
     * distances and the reachabilities. */
    const size_t fb = (nf * 8 + 255) / 256 * 256, vb = 2 * n * 8;
    char *h = NULL;
    int own = 0;
    int rc = kct_host(2 * fb + vb, &h, &own);
    if (rc)
        return rc;
    double *h_w = (double *)h;
    unsigned long long *h_ab = (unsigned long long *)(h + fb);
    double *h_v = (double *)(h + 2 * fb);
    /* the two sorts on streams of their own: at 60,000 values each is a
     * few blocks' latency (H200). What they read is done: the default
     * stream's last work before here (the merging's passes, the test
     * above) ended in a copy to the host. The forest first: the host
     * replays it while the values sort. */
    cudaStream_t *st = kct_streams();
    size_t t[2] = {tmp, tmp};
    cudaError_t e = cudaSuccess;
    if (nf) {
        kct_split_kernel<<<kern_grid_blocks(nf, KCT_THREADS), KCT_THREADS, 0, st[1]>>>(
            in->forest, nf, r.w0, r.ab0);
        if ((e = cudaGetLastError()) ||
            (e = cub::DeviceRadixSort::SortPairs(r.tmp[1], t[1], r.w0, r.w1, r.ab0, r.ab1, (int)nf,
                                                 0, 64, st[1])) ||
            (e = cudaMemcpyAsync(h_w, r.w1, nf * 8, cudaMemcpyDeviceToHost, st[1])) ||
            (e = cudaMemcpyAsync(h_ab, r.ab1, nf * 8, cudaMemcpyDeviceToHost, st[1])))
            rc = kern_cuda_fail(e, "the forest's sort", __FILE__, __LINE__);
    }
    if (!rc) {
        kct_keys_kernel<<<kern_grid_blocks(n, KCT_THREADS), KCT_THREADS, 0, st[0]>>>(
            in->core, reach, n, r.k0);
        if ((e = cudaGetLastError()) ||
            (e = cub::DeviceRadixSort::SortKeys(r.tmp[0], t[0], r.k0, r.k1, (int)(2 * n), 0, 64,
                                                st[0])))
            rc = kern_cuda_fail(e, "the values' sort", __FILE__, __LINE__);
        if (!rc) {
            kct_unsign_kernel<<<kern_grid_blocks(n, KCT_THREADS), KCT_THREADS, 0, st[0]>>>(r.k1 + n,
                                                                                           n);
            if ((e = cudaGetLastError()) ||
                (e = cudaMemcpyAsync(h_v, r.k1, 2 * n * 8, cudaMemcpyDeviceToHost, st[0])))
                rc = kern_cuda_fail(e, "the values' copy", __FILE__, __LINE__);
        }
    }
    kern_trace_mark("curve end: sorts queued");
    /* each array to take as it lands (a failed one ends the handing:
     * the run fails, what was taken is the caller's to free) */
    for (int q : {1, 0}) {
        if ((e = cudaStreamSynchronize(st[q])) && !rc)
            rc = kern_cuda_fail(e, "cudaStreamSynchronize", __FILE__, __LINE__);
        kern_trace_mark(q == 1 ? "curve end: forest back" : "curve end: values back");
        if (rc)
            continue;
        if (q == 1) {
            take(ctx, CURVE_END_WEIGHTS, h_w, nf);
            take(ctx, CURVE_END_ENDS, h_ab, nf);
        } else {
            take(ctx, CURVE_END_CORE, h_v, n);
            take(ctx, CURVE_END_REACH, h_v + n, n);
        }
    }
    kct_host_free(h, own);
    return rc;
}

int kct_finish(const kct_in *in, void (*take)(void *ctx, int what, const void *v, size_t m),
               void *ctx, int *finished)
{
    *finished = 0;
    const size_t n = in->n, nf = in->nf;
    if (n == 0 || 2 * n > (size_t)INT_MAX)
        return 0; /* CUB counts in int: the host's sorts */
    size_t tmp = 0;
    int rc = kct_tmp(n, nf, &tmp);
    if (rc)
        return rc;
    kct_room r;
    const int up = in->reach == NULL;
    if (up && !in->reach_host)
        return kern_fail(KERN_EINVAL, "dbscan curve's end: no reachabilities");
    const size_t bytes = kct_carve(&r, NULL, n, nf, up, tmp);
    char *base = NULL;
    if ((rc = kern_consume_malloc(&base, bytes, "dbscan curve's end")))
        return rc;
    kct_carve(&r, base, n, nf, up, tmp);
    rc = kct_run(in, r, tmp, take, ctx);
    const cudaError_t e = kern_pool_free(base);
    if (!rc && e != cudaSuccess)
        rc = kern_cuda_fail(e, "kern_pool_free", __FILE__, __LINE__);
    *finished = rc == 0;
    return rc;
}
