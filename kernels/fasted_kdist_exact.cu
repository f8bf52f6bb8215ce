/* exact's k-distance decided on the device (fasted_kdist_exact.cuh).
 *
 * For a row x, the passes give E, its K-th smallest estimate, and in pass
 * B every estimate under the row's bound with its other row. Where that
 * bound is at least exact_bound_reach(E) (else the row goes round again
 * with that bound, kd_exact_bound), the kept rows with an estimate at
 * most the reach of E are every row whose FP64 d2 can be among x's K
 * smallest, and at least K of
 * them (the K behind E). Their FP64 d2, in fp64's direct form, and the
 * K-th smallest of those is fp64's k-distance: the cpu engine's value,
 * whatever the passes' errors. A few candidates a row beyond K, so the
 * FP64 costs a gather of some K + c rows a row. */
#include "exact_kern.h"
#include "fasted_kdist_exact.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "f64_widen.cuh"
#include "kern_multi.cuh"
#include "kern_pool.cuh"
#include "kern_util.cuh"

#define KX_THREADS 256

static int kx_alloc(void **p, size_t size)
{
    return kern_pool_alloc(p, size, "exact's k-distance (its rows on the device)", 0);
}

static unsigned kx_blocks(size_t n)
{
    const size_t b = (n + KX_THREADS - 1) / KX_THREADS;
    return (unsigned)(b < 1 ? 1 : b > 8192 ? 8192 : b);
}

/* The kept copy of one device: the key of the rows it holds (the host
 * data, its shape, type and hash, the passes' centre and scale), the
 * rows, their norms on the device and the host, the largest. */
struct kx_slot {
    const void *host;
    size_t n, d;
    uint64_t hash;
    int xt;
    double sc;
    std::vector<double> center; /* empty: none */
    void *x;
    double *nx;
    std::vector<double> hnx;
    double nm;
};
static kx_slot g_kx[KERN_DEV_SLOTS];

static void kx_slot_free(kx_slot &s)
{
    kern_pool_free(s.x);
    kern_pool_free(s.nx);
    s.x = NULL;
    s.nx = NULL;
    s.host = NULL;
    std::vector<double>().swap(s.hnx);
    s.center.clear();
}

void kd_exact_release(void)
{
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        kx_slot_free(g_kx[d]);
}

/* The slot holds a's rows (any centre and scale). */
static bool kx_rows_are(const kx_slot &s, const kern_join_args *a)
{
    return s.x && s.host == a->x && s.n == a->n && s.d == a->d && s.hash == a->hash &&
           s.xt == a->x_type;
}

/* ... and their norms centred and scaled as a's passes see them. */
static bool kx_slot_is(const kx_slot &s, const kern_join_args *a, double sc)
{
    if (!kx_rows_are(s, a) || s.sc != sc || s.center.empty() != !a->center)
        return false;
    return !a->center || memcmp(s.center.data(), a->center, a->d * sizeof(double)) == 0;
}

int kd_exact_open(const kern_join_args *a, double sc, size_t nq, bool promoted, kd_exact *e)
{
    e->x = NULL;
    e->center = e->nx = e->outd = NULL;
    e->nmax = NULL;
    e->hnx = NULL;
    e->kept = false;
    e->bytes = 0;
    e->hmap = NULL;
    e->dmap = NULL;
    if (a->x_type < KERN_X_F64 || a->x_type > KERN_X_U8)
        return kern_fail(KERN_ENOMEM, "exact k-distance: the data's type is not one the device "
                                      "reads");
    const size_t n = a->n, d = a->d, xb = n * d * a->x_bytes;
    exact_kern_bound(d, promoted, &e->b);
    e->bytes = xb + n * 8 + nq * 8 + 8;
    kx_slot &slot = g_kx[a->device];
    int rc = kx_alloc((void **)&e->outd, nq * 8);
    if (rc == 0)
        rc = kx_alloc((void **)&e->nmax, 8);
    if (rc)
        return rc;
    if (kx_slot_is(slot, a, sc)) { /* a warm k-distance: nothing to upload */
        e->x = slot.x;
        e->nx = slot.nx;
        e->hnx = slot.hnx.data();
        e->nm = slot.nm;
        e->kept = true;
        unsigned long long bits;
        memcpy(&bits, &e->nm, 8);
        KERN_CUDA(cudaMemcpy(e->nmax, &bits, 8, cudaMemcpyHostToDevice));
        return 0;
    }
    /* kept unless a cap is set; the slot's last rows go first, but for the
     * same rows under another centre or scale (HDBSCAN*'s rounds after
     * the k-distance), whose norms alone are formed again */
    const bool keep = a->mem_cap == 0;
    const bool rows_kept = keep && kx_rows_are(slot, a);
    if (rows_kept) {
        e->x = slot.x;
        e->nx = slot.nx;
        slot.x = NULL; /* the slot's key, until it takes them back below */
        slot.nx = NULL;
    } else if (keep) {
        kx_slot_free(slot);
    }
    if (!rows_kept)
        rc = kx_alloc(&e->x, xb);
    if (rc == 0 && a->center)
        rc = kx_alloc((void **)&e->center, d * 8);
    if (rc == 0 && !rows_kept)
        rc = kx_alloc((void **)&e->nx, n * 8);
    if (rc)
        return rc;
    e->bytes += a->center ? d * 8 : 0;
    if (!rows_kept)
        KERN_CUDA(cudaMemcpy(e->x, a->x, xb, cudaMemcpyHostToDevice));
    if (a->center)
        KERN_CUDA(cudaMemcpy(e->center, a->center, d * 8, cudaMemcpyHostToDevice));
    KERN_CUDA(cudaMemset(e->nmax, 0, 8));
    const unsigned g = kx_blocks(n);
    switch (a->x_type) {
    case KERN_X_F64:
        f64_norm_kernel<double>
            <<<g, KX_THREADS>>>((const double *)e->x, n, d, e->center, sc, e->nx, e->nmax);
        break;
    case KERN_X_F32:
        f64_norm_kernel<float>
            <<<g, KX_THREADS>>>((const float *)e->x, n, d, e->center, sc, e->nx, e->nmax);
        break;
    case KERN_X_F16:
        f64_norm_kernel<__half>
            <<<g, KX_THREADS>>>((const __half *)e->x, n, d, e->center, sc, e->nx, e->nmax);
        break;
    default:
        f64_norm_kernel<uint8_t>
            <<<g, KX_THREADS>>>((const uint8_t *)e->x, n, d, e->center, sc, e->nx, e->nmax);
        break;
    }
    KERN_CUDA(cudaGetLastError());
    e->own_hnx.resize(n);
    KERN_CUDA(cudaMemcpy(e->own_hnx.data(), e->nx, n * 8, cudaMemcpyDeviceToHost));
    unsigned long long nm = 0;
    KERN_CUDA(cudaMemcpy(&nm, e->nmax, 8, cudaMemcpyDeviceToHost));
    memcpy(&e->nm, &nm, 8);
    e->hnx = e->own_hnx.data();
    if (keep) { /* the slot takes the rows, the norms and their key */
        slot.host = a->x;
        slot.n = n;
        slot.d = d;
        slot.hash = a->hash;
        slot.xt = a->x_type;
        slot.sc = sc;
        slot.center.assign(a->center ? a->center : e->own_hnx.data(),
                           a->center ? a->center + d : e->own_hnx.data());
        slot.x = e->x;
        slot.nx = e->nx;
        slot.hnx.swap(e->own_hnx);
        slot.nm = e->nm;
        e->hnx = slot.hnx.data();
        e->kept = true;
    }
    return 0;
}

void kd_exact_close(kd_exact *e)
{
    if (!e->kept) {
        kern_pool_free(e->x);
        kern_pool_free(e->nx);
    }
    kern_pool_free(e->center);
    kern_pool_free(e->outd);
    kern_pool_free(e->nmax);
    kern_pool_free(e->dmap);
    e->hmap = NULL;
    e->dmap = NULL;
    e->x = NULL;
    e->center = e->nx = e->outd = NULL;
    e->nmax = NULL;
    e->hnx = NULL;
    e->kept = false;
    std::vector<double>().swap(e->own_hnx);
}

int kd_exact_order(kd_exact *e, const uint32_t *map, size_t n)
{
    int rc = kx_alloc((void **)&e->dmap, n * 4);
    if (rc)
        return rc;
    KERN_CUDA(cudaMemcpy(e->dmap, map, n * 4, cudaMemcpyHostToDevice));
    e->hmap = map;
    e->bytes += n * 4;
    return 0;
}

float kd_exact_bound(const kd_exact *e, size_t g, float u)
{
    if (!(u < INFINITY))
        return u;
    const double r = exact_bound_reach(&e->b, e->hnx[e->hmap ? e->hmap[g] : g], e->nm, (double)u);
    float f = (float)r;
    if ((double)f < r)
        f = nextafterf(f, INFINITY);
    return f;
}

/* The dimensions of a candidate row a warp stages at a time
 * (kx_finish_kernel): 32 of a 4-byte type or less, 16 of a double, so a
 * warp's stage is 4.2 KB and a block's eight fit the static limit. */
template <class T> struct kx_stage {
    static constexpr unsigned kc = sizeof(T) > 4 ? 16 : 32;
};

/* Warp per query row of status 1 whose bound (the pass's u2) reaches as
 * far as its K-th estimate needs (else KD_STATUS_WIDER): its kept values
 * within the reach of its K-th estimate, in FP64 (each by one lane, in
 * fp64's order), compacted into the row's own slots as the 64 bits of
 * the double (high half in dvals, low in dcols: a slot is rewritten only
 * after the warp read it), then the K-th smallest by bisection over the
 * bits (non-negative doubles order as their bits). A row whose FP64
 * values are fewer than K or not numbers (not finite data) stays status
 * 1: the host decides it.
 *
 * The candidates' rows come through shared memory, kc dimensions at a
 * time, each row's read by consecutive lanes (one or two rows a load):
 * read by the lane that sums it, each load of a warp touched 32 sectors
 * of 32 rows. Staged, the decision of gauss 10^6 x 128's first round
 * takes about two thirds of its time (docs/BENCHMARKS.md). Each lane
 * still sums its candidate's terms in dimension order: fp64's d2 bit for
 * bit. */
template <class T>
__global__ void __launch_bounds__(KX_THREADS)
    kx_finish_kernel(const T *x, size_t d, unsigned q0, unsigned nq, int K, const float *u2,
                     float *dvals, unsigned *dcols, const unsigned *dfill, unsigned cap,
                     const float *outv, int *status, const double *nx,
                     const unsigned long long *nmax, exact_bound b, const uint32_t *map,
                     double *outd)
{
    constexpr unsigned KC = kx_stage<T>::kc, PER = 32 / KC; /* rows a load */
    __shared__ T s_x[KX_THREADS / 32][KC][33];
    __shared__ uint32_t s_j[KX_THREADS / 32][32];
    const unsigned r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    const unsigned wi = threadIdx.x >> 5;
    if (r >= nq || status[r] != 1)
        return;
    const unsigned g = q0 + r, m = min(dfill[r], cap);
    const unsigned gx = map ? map[g] : g; /* the dataset's row */
    const double reach =
        exact_bound_reach(&b, nx[gx], __longlong_as_double((long long)*nmax), (double)outv[r]);
    if (reach > (double)u2[g]) { /* rows beyond the bound may be among the K */
        if (lane == 0)
            status[r] = KD_STATUS_WIDER;
        return;
    }
    float *v = dvals + (size_t)r * cap;
    unsigned *c = dcols + (size_t)r * cap;
    const T *a = x + (size_t)gx * d;
    unsigned kept = 0;
    bool bad = false;
    for (unsigned t0 = 0; t0 < m; t0 += 32) {
        const unsigned t = t0 + lane;
        const bool in = t < m && (double)v[t] <= reach;
        const unsigned bal = __ballot_sync(0xffffffffu, in);
        const unsigned nb = __popc(bal);
        /* the values in reach, compacted: lane p takes the p-th */
        if (in) {
            const unsigned j = c[t];
            s_j[wi][__popc(bal & ((1u << lane) - 1))] = map ? map[j] : j;
        }
        __syncwarp();
        double w = 0;
        for (size_t k0 = 0; k0 < d && nb > 0; k0 += KC) {
            const unsigned kd = (unsigned)min((size_t)KC, d - k0);
            for (unsigned p0 = 0; p0 < nb; p0 += PER) {
                const unsigned p = p0 + lane / KC, k = lane % KC;
                if (p < nb && k < kd)
                    s_x[wi][k][p] = x[(size_t)s_j[wi][p] * d + k0 + k];
            }
            __syncwarp();
            if (lane < nb)
                for (unsigned k = 0; k < kd; k++) {
                    const double u = __dsub_rn(exact_w(a[k0 + k]), exact_w(s_x[wi][k][lane]));
                    w = __dadd_rn(w, __dmul_rn(u, u));
                }
            __syncwarp();
        }
        bad |= __any_sync(0xffffffffu, lane < nb && !(w == w));
        if (lane < nb) {
            const unsigned long long bits = (unsigned long long)__double_as_longlong(w);
            v[kept + lane] = __uint_as_float((unsigned)(bits >> 32));
            c[kept + lane] = (unsigned)bits;
        }
        kept += nb;
        __syncwarp();
    }
    if (bad || kept < (unsigned)K)
        return;
    unsigned long long lo = 0, hi = 0x7ff0000000000000ull; /* +inf */
    while (lo < hi) {
        const unsigned long long mid = lo + (hi - lo) / 2;
        unsigned n = 0;
        for (unsigned t = lane; t < kept; t += 32)
            n += ((unsigned long long)__float_as_uint(v[t]) << 32 | c[t]) <= mid;
        n = __reduce_add_sync(0xffffffffu, n);
        if (n >= (unsigned)K)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lane == 0) {
        outd[r] = __longlong_as_double((long long)lo);
        status[r] = KD_STATUS_EXACT;
    }
}

int kd_exact_finish(const kd_exact *e, const kern_join_args *a, int K, const float *u2,
                    float *dvals, unsigned *dcols, const unsigned *dfill, unsigned cap,
                    const float *outv, int *status, size_t nq, double *out)
{
    const unsigned g = (unsigned)((nq + 7) / 8); /* eight warps a block */
    const unsigned q0 = (unsigned)a->q0, n = (unsigned)nq;
#define KX_LAUNCH(T)                                                                               \
    kx_finish_kernel<T><<<g, KX_THREADS>>>((const T *)e->x, a->d, q0, n, K, u2, dvals, dcols,      \
                                           dfill, cap, outv, status, e->nx, e->nmax, e->b,         \
                                           e->dmap, e->outd)
    switch (a->x_type) {
    case KERN_X_F64:
        KX_LAUNCH(double);
        break;
    case KERN_X_F32:
        KX_LAUNCH(float);
        break;
    case KERN_X_F16:
        KX_LAUNCH(__half);
        break;
    default:
        KX_LAUNCH(uint8_t);
        break;
    }
#undef KX_LAUNCH
    KERN_CUDA(cudaGetLastError());
    KERN_CUDA(cudaMemcpy(out, e->outd, nq * 8, cudaMemcpyDeviceToHost));
    return 0;
}
