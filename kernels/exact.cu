/* `exact`: FASTED's pass decides which pairs can be in the join, FP64
 * decides which are. The FASTED kernels run in pairs mode at eps^2 + delta,
 * delta the bound of kernels/exact_bound.h taken at the dataset's largest
 * norm (so every pair whose exact d2 is <= eps^2 has d~2 <= eps^2 + delta,
 * docs/ACCURACY.md (4)); after each launch every emitted pair is computed
 * again on the GPU with the fp64 engine's arithmetic (direct (a-b)^2,
 * dimension order, no FMA contraction) and kept when d2 <= eps^2. So every
 * mode equals fp64's: COUNT, PERPOINT and HIST are accumulated on the device
 * from the FP64 values, PAIRS drains the kept pairs with FP64 distances.
 * Symmetric tiles, cancel, progress and refills are FASTED's.
 *
 * The FP64 rows stay on the device, and the host scan, across runs of one
 * dataset (g_x64). This version refines every candidate, not only the
 * band: a pair with d~2 <= eps^2 - delta_ij is known to be in, but COUNT
 * is the only mode that could skip its FP64 distance, and the candidates
 * are kept bounded by the pair buffer either way. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fasted_run.cuh"
#include "kern_hist.cuh"
#include "kern_util.cuh"

struct exact_dev {
    const double *x; /* n x d, as the host holds it */
    size_t d, q0;
    int mode;
    double lim2; /* eps^2, HIST: the top edge */
    const double *edges;
    int nbins;
    unsigned long long *count, *counts, *hist, *nout;
    uint32_t *pi, *pj; /* PAIRS: the kept pairs, compacted */
    double *pd;
};

__global__ void exact_refine_kernel(const uint32_t *__restrict__ ci,
                                    const uint32_t *__restrict__ cj, unsigned long long np,
                                    exact_dev o)
{
    const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool keep = false;
    uint32_t i = 0, j = 0;
    double s = 0;
    if (t < np) {
        i = ci[t];
        j = cj[t];
        const double *a = o.x + (size_t)i * o.d, *b = o.x + (size_t)j * o.d;
        for (size_t k = 0; k < o.d; k++) {
            const double u = __dsub_rn(a[k], b[k]);
            s = __dadd_rn(s, __dmul_rn(u, u));
        }
        keep = s <= o.lim2;
    }
    switch (o.mode) {
    case KJOIN_COUNT: {
        const unsigned m = __ballot_sync(0xffffffffu, keep);
        if ((threadIdx.x & 31) == 0 && m)
            atomicAdd(o.count, (unsigned long long)__popc(m));
        break;
    }
    case KJOIN_PERPOINT:
        if (keep)
            atomicAdd(&o.counts[i - o.q0], 1ull);
        break;
    case KJOIN_HIST:
        if (keep)
            atomicAdd(&o.hist[kern_hist_slot(s, o.edges, o.nbins)], 1ull);
        break;
    default:
        if (keep) {
            const unsigned long long p = atomicAdd(o.nout, 1ull);
            o.pi[p] = i;
            o.pj[p] = j;
            o.pd[p] = s;
        }
        break;
    }
}

/* The FP64 rows on the device and the host scan of the values FP16 will
 * hold (largest |v| and squared norm, centred when the run centres), kept
 * across runs of one dataset: a sweep or a compare runs exact again and
 * again on the same data. */
static struct {
    const double *x;
    size_t n, d;
    uint64_t hash;
    int dev;
    double *dx;
    size_t bytes;
    int scanned;
    const double *center; /* the scan's */
    double vmax, nmax2;
} g_x64;

void exact_release(void)
{
    if (g_x64.dx) {
        int cur = 0;
        cudaGetDevice(&cur);
        cudaSetDevice(g_x64.dev);
        cudaFree(g_x64.dx);
        cudaSetDevice(cur);
    }
    memset(&g_x64, 0, sizeof g_x64);
    cudaGetLastError();
}

static int exact_same_data(const kern_join_args *a)
{
    return g_x64.x == a->x && g_x64.n == a->n && g_x64.d == a->d && g_x64.hash == a->hash;
}

struct exact_ctx {
    const kern_join_args *a;
    exact_dev o;
    size_t cap; /* compaction buffers' pairs */
    unsigned long long refined;
    int ready;
};

static int exact_noop_pairs(void *, size_t, const uint32_t *, const uint32_t *, const double *)
{
    return 0;
}

/* Before the first launch: the FP64 data and the outputs, on the run's
 * device and budget (before the pair buffers, which shrink to fit). */
static int exact_setup(exact_ctx *c, kern_run *k)
{
    const kern_join_args *a = c->a;
    exact_dev &o = c->o;
    double t0 = kern_now();
    int rc;
    const size_t bytes = a->n * a->d * sizeof(double);
    if (g_x64.dx && exact_same_data(a) && g_x64.dev == a->device) {
        if ((rc = kern_charge(k, g_x64.bytes, "the FP64 dataset")))
            return rc;
    } else {
        const int scanned = g_x64.scanned && exact_same_data(a);
        const double *center = g_x64.center;
        const double vmax = g_x64.vmax, nmax2 = g_x64.nmax2;
        exact_release();
        if ((rc = kern_malloc(k, (void **)&g_x64.dx, bytes, "the FP64 dataset")))
            return rc;
        KERN_CUDA(cudaMemcpy(g_x64.dx, a->x, bytes, cudaMemcpyHostToDevice));
        g_x64.x = a->x;
        g_x64.n = a->n;
        g_x64.d = a->d;
        g_x64.hash = a->hash;
        g_x64.dev = a->device;
        g_x64.bytes = bytes;
        g_x64.scanned = scanned; /* the scan of this data stays */
        g_x64.center = center;
        g_x64.vmax = vmax;
        g_x64.nmax2 = nmax2;
    }
    o.x = g_x64.dx;
    if ((rc = kern_malloc(k, (void **)&o.count, sizeof(unsigned long long), "the count")))
        return rc;
    KERN_CUDA(cudaMemset(o.count, 0, sizeof(unsigned long long)));
    if (a->mode == KJOIN_PERPOINT) {
        const size_t b = (a->q1 - a->q0 + 1) * sizeof(unsigned long long);
        if ((rc = kern_malloc(k, (void **)&o.counts, b, "the per-point counts")))
            return rc;
        KERN_CUDA(cudaMemset(o.counts, 0, b));
    } else if (a->mode == KJOIN_HIST) {
        const size_t nb = a->hist_nbins;
        if ((rc = kern_malloc(k, (void **)&o.edges, (nb + 1) * sizeof(double), "the histogram")) ||
            (rc = kern_malloc(k, (void **)&o.hist, (nb + 1) * 8, "the histogram")))
            return rc;
        KERN_CUDA(cudaMemcpy((void *)o.edges, a->hist_edges, (nb + 1) * sizeof(double),
                             cudaMemcpyHostToDevice));
        KERN_CUDA(cudaMemset(o.hist, 0, (nb + 1) * 8));
    } else if (a->mode == KJOIN_PAIRS) {
        if ((rc = kern_malloc(k, (void **)&o.nout, 8, "the refined pairs")))
            return rc;
    }
    k->r->t_h2d += kern_now() - t0;
    c->ready = 1;
    return 0;
}

/* The compacted pairs, once the pair buffer's size is known (kern_drive
 * left room for them: extra_per_pair). */
static int exact_compact_alloc(exact_ctx *c, kern_run *k)
{
    exact_dev &o = c->o;
    c->cap = k->cap;
    int rc;
    if ((rc = kern_malloc(k, (void **)&o.pi, c->cap * 4, "the refined pairs")) ||
        (rc = kern_malloc(k, (void **)&o.pj, c->cap * 4, "the refined pairs")) ||
        (rc = kern_malloc(k, (void **)&o.pd, c->cap * 8, "the refined pairs")))
        return rc;
    return 0;
}

static int exact_setup_cb(void *vc, kern_run *k)
{
    return exact_setup((exact_ctx *)vc, k);
}

static int exact_refine(void *vc, kern_run *k, kern_step *s)
{
    exact_ctx *c = (exact_ctx *)vc;
    int rc;
    if (c->a->mode == KJOIN_PAIRS && !c->o.pi && (rc = exact_compact_alloc(c, k)) != 0)
        return rc;
    const unsigned long long np = s->np;
    c->refined += np;
    if (c->a->mode == KJOIN_PAIRS)
        KERN_CUDA(cudaMemsetAsync(c->o.nout, 0, 8, k->st));
    if (np) {
        const unsigned threads = 256;
        exact_refine_kernel<<<(unsigned)((np + threads - 1) / threads), threads, 0, k->st>>>(
            k->pi, k->pj, np, c->o);
        KERN_LAUNCH_CHECK("exact_refine_kernel");
    }
    s->np = 0;
    if (c->a->mode == KJOIN_PAIRS) {
        unsigned long long kept = 0;
        KERN_CUDA(cudaMemcpyAsync(&kept, c->o.nout, 8, cudaMemcpyDeviceToHost, k->st));
        KERN_CUDA(cudaStreamSynchronize(k->st));
        s->np = kept;
        s->pi = c->o.pi;
        s->pj = c->o.pj;
        s->pd = c->o.pd;
    }
    return 0;
}

static void exact_free(exact_ctx *c)
{
    cudaFree(c->o.count);
    cudaFree(c->o.counts);
    cudaFree((void *)c->o.edges);
    cudaFree(c->o.hist);
    cudaFree(c->o.pi);
    cudaFree(c->o.pj);
    cudaFree(c->o.pd);
    cudaFree(c->o.nout);
    cudaGetLastError();
}

/* Copy the device accumulators into the caller's outputs. */
static int exact_fetch(exact_ctx *c, kern_join_result *r)
{
    const kern_join_args *a = c->a;
    double t0 = kern_now();
    if (a->mode == KJOIN_COUNT) {
        unsigned long long v = 0;
        if (c->ready)
            KERN_CUDA(cudaMemcpy(&v, c->o.count, 8, cudaMemcpyDeviceToHost));
        r->pairs = v;
    } else if (a->mode == KJOIN_PERPOINT) {
        const size_t nq = a->q1 - a->q0;
        if (c->ready && nq)
            KERN_CUDA(cudaMemcpy(a->counts, c->o.counts, nq * 8, cudaMemcpyDeviceToHost));
        else
            memset(a->counts, 0, nq * 8);
        r->pairs = 0;
        for (size_t q = 0; q < nq; q++)
            r->pairs += a->counts[q];
    } else if (a->mode == KJOIN_HIST) {
        const size_t nb = a->hist_nbins;
        unsigned long long *h = (unsigned long long *)calloc(nb + 1, 8);
        if (!h)
            return kern_fail(KERN_ENOMEM, "out of host memory for the histogram");
        if (c->ready) {
            cudaError_t e = cudaMemcpy(h, c->o.hist, (nb + 1) * 8, cudaMemcpyDeviceToHost);
            if (e != cudaSuccess) {
                free(h);
                return kern_cuda_fail(e, "cudaMemcpy(hist)", __FILE__, __LINE__);
            }
        }
        *a->hist_below = h[0];
        r->pairs = h[0];
        for (size_t b = 0; b < nb; b++) {
            a->hist[b] = h[b + 1];
            r->pairs += h[b + 1];
        }
        free(h);
    }
    r->t_d2h += kern_now() - t0;
    return 0;
}

extern "C" int kern_exact_run(const kern_join_args *a, kern_join_result *r)
{
    memset(r, 0, sizeof *r);
    if (!a->x || a->n == 0 || a->d == 0)
        return kern_fail(KERN_EINVAL, "exact: bad sizes (n %zu, d %zu)", a->n, a->d);
    /* FP16 must hold the data as converted (centred when a->center); the
     * bound is taken at the largest norm of what is converted. Scanned once
     * per dataset and centring. */
    if (!(g_x64.scanned && exact_same_data(a) && g_x64.center == a->center)) {
        if (!exact_same_data(a))
            exact_release();
        double vm = 0, nm2 = 0;
        for (size_t i = 0; i < a->n; i++) {
            double e = 0;
            for (size_t k = 0; k < a->d; k++) {
                const double v = a->center ? a->x[i * a->d + k] - a->center[k] : a->x[i * a->d + k];
                /* A value that is not finite (Inf, or NaN from centring
                 * an Inf column) leaves no bound: vmax Inf refuses it. */
                vm = isfinite(v) ? fmax(vm, fabs(v)) : INFINITY;
                e += v * v;
            }
            nm2 = fmax(nm2, e);
        }
        g_x64.x = a->x;
        g_x64.n = a->n;
        g_x64.d = a->d;
        g_x64.hash = a->hash;
        g_x64.scanned = 1;
        g_x64.center = a->center;
        g_x64.vmax = vm;
        g_x64.nmax2 = nm2;
    }
    const double vmax = g_x64.vmax, nmax2 = g_x64.nmax2;
    /* The host scales data beyond FP16's range down by a power of two
     * (a->scale, exact): the bound's relative terms are unchanged, so it is
     * taken in the scaled units and brought back (the FASTED pass scales
     * its threshold again); the refinement uses the FP64 data as loaded. */
    const double sc = a->scale ? a->scale : 1.0;
    if (!isfinite(vmax))
        return kern_fail(KERN_EINVAL,
                         "a value is not finite%s, which FP16 cannot bound; use fp64 or ted",
                         a->center ? " (centred)" : "");
    if (!(vmax * sc <= EXACT_FP16_MAX))
        return kern_fail(KERN_EINVAL,
                         "values up to |v| = %g%s are beyond FP16's 65504 at scale %g; use fp64 "
                         "or ted",
                         vmax, a->center ? " (centred)" : "", sc);
    const double lim2 = a->mode == KJOIN_HIST ? a->hist_edges[a->hist_nbins] : a->eps * a->eps;
    exact_bound b;
    exact_bound_init(&b, a->d);
    const double nmax = sqrt(nmax2) * sc;
    const double delta = exact_bound_delta(&b, nmax, nmax, sqrt(lim2) * sc) / (sc * sc);

    exact_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.o.d = a->d;
    c.o.q0 = a->q0;
    c.o.mode = a->mode;
    c.o.lim2 = lim2;
    c.o.nbins = (int)a->hist_nbins;
    kern_join_args f = *a;
    f.mode = KJOIN_PAIRS;
    f.format = NULL; /* fp16: the format the bound is derived for */
    if (a->mode != KJOIN_PAIRS) {
        f.pair_fn = exact_noop_pairs; /* nothing is drained */
        f.pair_ctx = NULL;
    }
    f.counts = NULL;
    f.hist = f.hist_below = NULL;
    f.hist_edges = NULL;
    f.hist_nbins = 0;
    const fasted_post post = {
        &c, 8, lim2 + delta, a->mode == KJOIN_PAIRS ? (size_t)16 : 0, exact_setup_cb, exact_refine};
    int rc = fasted_run(&f, r, &post);
    if (rc == 0)
        rc = exact_fetch(&c, r);
    char v[sizeof r->variant];
    snprintf(v, sizeof v, "%s", r->variant);
    snprintf(r->variant, sizeof r->variant, "%.60s + fp64 refine", v);
    r->refined = c.refined;
    exact_free(&c);
    return rc;
}
