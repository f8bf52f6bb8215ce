/* The k-distance over the FP64 grid built on the device:
 * `kdist engine=exact` where exact joins over the grid (low d). For each
 * query row q, the K-th smallest d2(q, j) over rows j != q, each d2 the
 * FP64 direct form of fp64.cu and cpu (sum over k in order of
 * (a_k - b_k)^2, no contraction): cpu's k-distances exactly.
 *
 * Passes at radius r, r doubling (src/cpu_kdist.c's scheme on the device):
 * the grid of kernels/grid_gpu.cuh built at eps = r (cells r (1 + 1e-6)
 * wide) puts every row within r of q in q's 3^k neighbour cells
 * (fp64_grid.cu's FG_MAX_CELLS note), so a row whose K-th smallest
 * candidate d2 is at most r^2 has its true K-th (every row nearer is a
 * candidate); a row with fewer than K candidates or a larger K-th waits
 * for the next pass. A grid of at most 2 cells along every indexed
 * dimension makes every row a candidate of every row: that pass ends
 * all. The first radius (the caller's) is narrowed while the cells are
 * far denser than it assumed (clustered data: the points' mean cell
 * count, sum c^2 / n, against 2 (K + 1) rows in an r-ball).
 *
 * A warp takes a query group (the rows of one cell, up to 32), a lane a
 * row; every lane reads the same candidate (a broadcast), keeps its K
 * smallest (kernels/kd_top.cuh: in registers to K = 64, a max-heap in
 * local memory beyond), and writes its row's answer once. Memory: the index, the rows in
 * cell order, a flag and a double a query row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f64_common.cuh"
#include "grid_gpu.cuh"
#include "grid_index.cuh"
#include "kd_top.cuh"
#include "kern_util.cuh"

#define KD_WARPS 8
#define KD_GROUP 32
#define KD_K 6 /* dimensions indexed, as the join's grid */
#define KD_MAX_CELLS 67108864.0
#define KD_MAX_PASSES 200

template <int D>
__device__ __forceinline__ double kd_d2(const double *__restrict__ a, const double *__restrict__ b,
                                        size_t d, double bound)
{
    double s = 0.0;
    if (D > 0) {
#pragma unroll
        for (int k = 0; k < D; k++) {
            double t = __dsub_rn(a[k], b[k]);
            s = __dadd_rn(s, __dmul_rn(t, t));
        }
    } else {
        for (size_t k = 0; k < d; k++) {
            double t = __dsub_rn(a[k], b[k]);
            s = __dadd_rn(s, __dmul_rn(t, t));
            if (!(s < bound)) /* partial sums only grow: not among the K */
                break;
        }
    }
    return s;
}

/* Groups [ga, gb): each undone query row's K smallest over its
 * neighbour cells; final (or every row a candidate) rows get out and
 * done, the rest count in *left. */
template <int D, class Top>
__global__ void __launch_bounds__(KD_WARPS * 32)
    kd_grid_kernel(const double *__restrict__ x, size_t d, const uint32_t *__restrict__ ids,
                   const long long *__restrict__ ukey, const size_t *__restrict__ cstart,
                   size_t ncell, const size_t *__restrict__ gpos, const uint32_t *__restrict__ glen,
                   const uint32_t *__restrict__ gcell, const size_t *__restrict__ qpos,
                   grid_dims grid, size_t ga, size_t gb, size_t n, int K, double r2, int all,
                   size_t q0, double *out, uint8_t *done, unsigned long long *left)
{
    const int lane = threadIdx.x & 31;
    const size_t grp = ga + (((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    if (grp >= gb)
        return; /* uniform over the warp */
    const unsigned len = glen[grp];
    const size_t first = gpos[grp];
    const bool active = lane < (int)len;
    const size_t qp = active ? qpos[first + lane] : 0;
    const uint32_t q = active ? ids[qp] : 0;
    const bool mine = active && !done[q - q0];
    if (!__any_sync(0xffffffffu, mine))
        return;
    Top top;
    top.init(K);
    const double *qrow = x + qp * d; /* read again each candidate: L1 */
    grid_walk gw;
    grid_walk_init(grid, ukey[gcell[grp]], gw);
    for (int nb = 0; nb < gw.nnb; nb++) {
        size_t cs, ce;
        if (!grid_walk_range(grid, gw, nb, ukey, ncell, cstart, 0, n, cs, ce))
            continue;
        if (!mine)
            continue;
        for (size_t c = cs; c < ce; c++) {
            if (c == qp) /* itself, by index: a duplicate is a neighbour at 0 */
                continue;
            const double bound = top.kth();
            const double s = kd_d2<D>(qrow, x + c * d, d, bound);
            if (s < bound)
                top.add(s);
        }
    }
    if (!mine)
        return;
    const double kth = top.kth();
    if (all || kth <= r2) {
        out[q - q0] = kth;
        done[q - q0] = 1;
    } else {
        atomicAdd(left, 1ULL);
    }
}

/* points' mean cell count: sum over cells of count^2, into *acc. */
__global__ void kd_occ_kernel(const size_t *__restrict__ cstart, size_t ncell,
                              unsigned long long *acc)
{
    unsigned long long s = 0;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < ncell;
         c += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long m = cstart[c + 1] - cstart[c];
        s += m * m;
    }
    if (s)
        atomicAdd(acc, s);
}

struct kd_dev {
    double *x;
    size_t d, n;
    grid_dev g;
    int K, all;
    double r2;
    size_t q0;
    double *out;
    uint8_t *done;
    unsigned long long *left;
};

template <int D, class Top> static void kd_launch_k(f64_run *r, const f64_item *it, const kd_dev *v)
{
    const size_t blocks = (it->qb - it->qa + KD_WARPS - 1) / KD_WARPS;
    kd_grid_kernel<D, Top><<<(unsigned)blocks, KD_WARPS * 32, 0, r->k.st>>>(
        v->x, v->d, v->g.ids, v->g.ukey, v->g.cstart, v->g.ncell, v->g.gpos, v->g.glen, v->g.gcell,
        v->g.qpos, v->g.grid, it->qa, it->qb, v->n, v->K, v->r2, v->all, v->q0, v->out, v->done,
        v->left);
}

/* K's container: registers to 64, a heap beyond (KDIST_MAX_K is 256). */
template <int D> static void kd_launch_d(f64_run *r, const f64_item *it, const kd_dev *v)
{
    if (v->K <= 4)
        kd_launch_k<D, kd_top_reg<4>>(r, it, v);
    else if (v->K <= 16)
        kd_launch_k<D, kd_top_reg<16>>(r, it, v);
    else if (v->K <= 64)
        kd_launch_k<D, kd_top_reg<64>>(r, it, v);
    else
        kd_launch_k<D, kd_top_heap>(r, it, v);
}

static int kd_launch(f64_run *r, const f64_item *it, void *user)
{
    const kd_dev *v = (const kd_dev *)user;
    if (v->d == 2)
        kd_launch_d<2>(r, it, v);
    else if (v->d == 3)
        kd_launch_d<3>(r, it, v);
    else
        kd_launch_d<0>(r, it, v);
    KERN_LAUNCH_CHECK("kd_grid_kernel");
    return 0;
}

/* The last pass's index and rows, per device: a warm `kdist` at the same
 * K starts at the same radius and finds its first pass's index here. */
static grid_cache g_kd[KERN_DEV_SLOTS];

void grid_kdist_release(void)
{
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        grid_cache_free(g_kd[d]);
}

/* This device's index at radius rad into slot c: the slot's when its key
 * matches, else built anew. *held: the slot's bytes this run is charged
 * for (a pass that rebuilds gives the last one's back first, so passes
 * never add up against the run's budget). */
static int kd_index(f64_run *r, const kern_join_args *a, double rad, grid_cache &c, size_t *held)
{
    if (grid_cache_is(c, a, rad, KD_K, KD_GROUP)) {
        if (*held)
            return 0;
        r->res->cache_hit = 1;
        int rc = kern_charge(&r->k, c.bytes, "the grid index");
        if (rc == 0)
            *held = c.bytes;
        return rc;
    }
    kern_uncharge(&r->k, *held);
    *held = 0;
    grid_cache_free(c);
    const size_t used = r->k.mem_used;
    double *x = NULL;
    size_t ngroup = 0;
    int rc = grid_build_gpu(r, a, rad, KD_K, KD_MAX_CELLS, 0, KD_GROUP, &c.g, &ngroup, &x,
                            "fp64 grid k-distance");
    c.rows[0] = x;
    c.dev = a->device;
    if (rc == 0) {
        grid_cache_keep(c, a, rad, KD_K, KD_GROUP, ngroup, r->k.mem_used - used);
        *held = c.bytes;
    } else {
        grid_cache_free(c);
    }
    return rc;
}

/* Points' mean count of their own cell (sum c^2 / n). */
static int kd_occupancy(f64_run *r, const grid_cache &c, unsigned long long *acc, double *occ)
{
    cudaStream_t st = r->k.st;
    unsigned long long s = 0;
    KERN_CUDA(cudaMemsetAsync(acc, 0, sizeof *acc, st));
    kd_occ_kernel<<<gg_blocks(c.g.ncell), GG_THREADS, 0, st>>>(c.g.cstart, c.g.ncell, acc);
    KERN_LAUNCH_CHECK("kd_occ_kernel");
    KERN_CUDA(cudaMemcpyAsync(&s, acc, sizeof s, cudaMemcpyDeviceToHost, st));
    KERN_CUDA(cudaStreamSynchronize(st));
    *occ = (double)s / (double)c.n;
    return 0;
}

/* Volume of the unit ball in k dimensions: V_k = 2 pi / k V_{k-2}. */
static double kd_ball(int k)
{
    double v[GRID_MAXK + 1];
    v[0] = 1;
    v[1] = 2;
    for (int j = 2; j <= GRID_MAXK; j++)
        v[j] = 2 * M_PI / j * v[j - 2];
    return v[k < 0 ? 0 : k > GRID_MAXK ? GRID_MAXK : k];
}

extern "C" int kern_fp64_grid_kdist(const kern_join_args *a0, int K, double r0, double *out,
                                    kern_join_result *res)
{
    memset(res, 0, sizeof *res);
    if (!a0->x || a0->n < 2 || a0->d == 0 || a0->c0 || a0->q0 >= a0->q1 || a0->q1 > a0->n)
        return kern_fail(KERN_EINVAL,
                         "fp64 grid k-distance: bad run (n %zu, d %zu, rows [%zu, %zu))", a0->n,
                         a0->d, a0->q0, a0->q1);
    if (K < 1 || K > 256 || (size_t)K > a0->n - 1)
        return kern_fail(KERN_EINVAL, "fp64 grid k-distance: K=%d outside 1..min(256, n-1)", K);
    if (!(r0 > 0) || !isfinite(r0))
        return kern_fail(KERN_EINVAL,
                         "fp64 grid k-distance: the first radius must be positive "
                         "and finite (got %g)",
                         r0);
    kern_join_args a = *a0;
    a.mode = KJOIN_COUNT;
    if (a.ndevices > 0) /* one device: the passes' flags live there */
        a.device = a.devices[0];
    a.ndevices = 0;
    const size_t nq = a.q1 - a.q0;
    f64_run r;
    int rc = f64_begin(&r, &a, res, "fp64 grid k-distance", 0);
    if (rc)
        return rc;
    r.res->prep_name = "index";
    grid_cache &c = g_kd[a.device];
    double *dout = NULL;
    uint8_t *done = NULL;
    unsigned long long *left = NULL;
    int passes = 0, narrowed = 0, kdim = 0;
    size_t held = 0;
    double rad = r0;
    cudaStream_t st = r.k.st;
    if ((rc = f64_malloc(&r, (void **)&dout, nq * sizeof *dout, "the k-distances")) ||
        (rc = f64_malloc(&r, (void **)&done, nq, "the k-distances")) ||
        (rc = f64_malloc(&r, (void **)&left, sizeof *left, "the k-distances")))
        goto out;
    KERN_CUDA_GOTO(cudaMemsetAsync(done, 0, nq, st), out);
    for (;;) {
        if ((rc = kd_index(&r, &a, rad, c, &held)))
            goto out;
        kdim = c.g.grid.k;
        /* Far denser cells than the radius assumed: narrow it (a few
         * times at most; the doubling passes mend a radius too small). */
        double occ = 0;
        if ((rc = kd_occupancy(&r, c, left, &occ)))
            goto out;
        const double want = 2.0 * (K + 1), ball = kd_ball(kdim);
        if (narrowed >= 4 || occ * ball <= 8 * want)
            break;
        double f = pow(want / (occ * ball), 1.0 / kdim);
        rad *= f < 0.125 ? 0.125 : f;
        narrowed++;
    }
    for (;;) {
        if (passes >= KD_MAX_PASSES) {
            rc = kern_fail(KERN_EINVAL,
                           "fp64 grid k-distance: rows left after %d passes (radius %g)", passes,
                           rad);
            goto out;
        }
        if (passes > 0 && (rc = kd_index(&r, &a, rad, c, &held)))
            goto out;
        kd_dev v;
        memset(&v, 0, sizeof v);
        v.x = (double *)c.rows[0];
        v.d = a.d;
        v.n = a.n;
        v.g = c.g;
        v.K = K;
        v.r2 = rad * rad;
        v.all = 1;
        for (int j = 0; j < c.g.grid.k; j++)
            v.all = v.all && c.g.grid.cnt[j] <= 2;
        v.q0 = a.q0;
        v.out = dout;
        v.done = done;
        v.left = left;
        unsigned long long nleft = 0;
        KERN_CUDA_GOTO(cudaMemsetAsync(left, 0, sizeof *left, st), out);
        if ((rc = grid_drive(&r, c.ngroup, kd_launch, &v, "fp64 grid k-distance")))
            goto out;
        KERN_CUDA_GOTO(cudaMemcpyAsync(&nleft, left, sizeof nleft, cudaMemcpyDeviceToHost, st),
                       out);
        KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
        passes++;
        if (nleft == 0)
            break;
        rad *= 2;
    }
    {
        const double t0 = kern_now();
        KERN_CUDA_GOTO(cudaMemcpyAsync(out, dout, nq * sizeof *out, cudaMemcpyDeviceToHost, st),
                       out);
        KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
        res->t_d2h += kern_now() - t0;
    }
out:
    res->d_padded = a.d;
    snprintf(res->variant, sizeof res->variant,
             "fp64 grid k=%d, %d passes from radius %.3g, direct (a-b)^2, no FMA", kdim, passes,
             r0);
    kern_free(&r.k, dout, nq * sizeof *dout);
    kern_free(&r.k, done, nq);
    kern_free(&r.k, left, sizeof *left);
    f64_end(&r);
    return rc;
}
