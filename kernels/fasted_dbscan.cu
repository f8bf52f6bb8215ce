/* DBSCAN's union and border passes on the tensor-core kernels
 * (kern_fasted_cluster, kernels.h): a FASTED run whose epilogue is the
 * clustering one (kernels/epi_clu.cuh, modes FASTED_CLU_*), set through
 * fasted_run's params hook, so the kernel, its variant, its scheduler and
 * its eps threshold are the join's: the eps-graph is the one the same
 * engine's PAIRS run lists. Between the passes the roots are flattened on
 * the device. Over several devices the tiles are shared through one queue
 * (kern_multi_run); each device keeps its own union-find of the edges it
 * saw, merged on the host (O(n)) and sent back flattened before the
 * border, whose per-device answers are merged by a minimum. The border
 * needs no join of its own: a non-core row has at most minPts - 2
 * neighbours besides itself, so the union pass keeps each non-core row's
 * core neighbours in a list of minPts - 2 slots (clu_note), and a kernel
 * over the lists gives the border once the roots are flat. Where the
 * lists do not fit (a quarter of the device's free memory) the border
 * pass runs instead: the kernel once more with the border epilogue.
 * Device memory: 9 bytes a row (core flag, parent, border) and 4 (minPts
 * - 1) bytes a row for the lists, beyond the dataset.
 *
 * exact (kern_exact_cluster) runs the same passes as its own PAIRS
 * runs, every candidate decided as its join decides it (the FP16 pass,
 * the bound, the FP64 refinement of the band), the kept pairs of each
 * launch handed to the same actions on the device (kern_join_args.
 * pair_dev, fdb_pairs_kernel) instead of to the host: fp64's eps-graph,
 * no pair leaves the device, the pair buffer bounds the memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "epi_cluster.cuh" /* clu_init_kernel, clu_flatten_kernel, clu_merge_kernel */
#include "fasted_int.cuh"
#include "fasted_run.cuh"
#include "kern_util.cuh"

#define FDB_THREADS 256

/* One device's arrays and the hook that hands them to its kernels. */
struct fdb_dev {
    int device;
    int mode; /* FASTED_CLU_UNION or FASTED_CLU_BORDER */
    uint8_t *core;
    uint32_t *parent, *border;
    uint32_t *nb; /* the non-core rows' core neighbours (NULL: the border pass runs) */
    unsigned *fill, *over;
    unsigned cap;
    fasted_post post;
};

/* kern_multi_run's per-device function has no context: the devices' state
 * by ordinal, held under g_fdb_mu for the whole call. */
static std::mutex g_fdb_mu;
static fdb_dev *g_fdb[KERN_DEV_SLOTS];

static int fdb_params(void *ctx, kern_run *k, fasted_params *p, int use_wg)
{
    (void)use_wg;
    const fdb_dev *d = (const fdb_dev *)ctx;
    p->mode = d->mode;
    p->dbs.core = d->core;
    p->dbs.parent = d->parent;
    p->dbs.border = d->border;
    p->dbs.nb = d->nb;
    p->dbs.fill = d->fill;
    p->dbs.cap = d->cap;
    /* The integer formats' threshold as a plain run forms it (fasted.cu):
     * from eps, not from the hook's eps2_min. */
    const kern_join_args *a = k->a;
    const double sc = fasted_scale(a, a->format ? a->format : KERN_FORMAT(fp16));
    const double thr = a->eps * a->eps * sc * sc;
    p->eps2_u = thr >= 4294967295.0 ? 0xffffffffu : thr >= 0 ? (unsigned)floor(thr) : 0u;
    return 0;
}

static unsigned fdb_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1,
                              std::min((n + FDB_THREADS - 1) / FDB_THREADS, (size_t)4096));
}

static int fdb_run_queue(const kern_join_args *a, kern_join_result *r, kern_queue *q,
                         unsigned long long *items)
{
    return fasted_run_q(a, r, &g_fdb[a->device]->post, q, items);
}

/* exact's passes: the same actions on a list of pairs, each ordered pair
 * (i, j) of its PAIRS run (a symmetric run lists both orders), i != j. */
static __global__ void fdb_pairs_kernel(fasted_clu_params c, int mode,
                                        const uint32_t *__restrict__ pi,
                                        const uint32_t *__restrict__ pj, unsigned long long np)
{
    for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < np;
         t += (unsigned long long)gridDim.x * blockDim.x) {
        const uint32_t i = pi[t], j = pj[t];
        if (i == j)
            continue;
        const uint8_t ci = c.core[i], cj = c.core[j];
        if (mode == FASTED_CLU_UNION) {
            if (ci && cj && i < j)
                clu_union(c.parent, i, j);
            else if (c.nb && !ci && cj) /* (j, i) comes as a pair of its own */
                clu_note(c.nb, c.fill, c.cap, i, j);
        } else if (!ci && cj) {
            atomicMin(&c.border[i], c.parent[j]);
        }
    }
}

/* The border from the lists the union pass kept (parent flattened): a
 * non-core row's least root among its core neighbours. A list that
 * overflowed (the union pass saw more than cap) sets *over. */
static __global__ void fdb_list_border_kernel(const uint8_t *__restrict__ core, size_t n,
                                              const uint32_t *__restrict__ nb,
                                              const unsigned *__restrict__ fill, unsigned cap,
                                              const uint32_t *__restrict__ parent, uint32_t *border,
                                              unsigned *over)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        if (core[i])
            continue;
        const unsigned f = fill[i];
        if (f > cap) {
            *over = 1;
            continue;
        }
        uint32_t m = border[i];
        for (unsigned k = 0; k < f; k++)
            m = min(m, parent[nb[i * cap + k]]);
        border[i] = m;
    }
}

/* kern_join_args.pair_dev: exact's kept pairs of one launch, on its
 * stream, into the device's union-find or border array. */
static int fdb_consume(void *ctx, int device, void *stream, const uint32_t *pi, const uint32_t *pj,
                       unsigned long long np)
{
    (void)ctx;
    const fdb_dev *d = g_fdb[device];
    const fasted_clu_params c = {d->core, d->parent, d->border, d->nb, d->fill, d->cap};
    fdb_pairs_kernel<<<fdb_blocks(np), FDB_THREADS, 0, (cudaStream_t)stream>>>(c, d->mode, pi, pj,
                                                                               np);
    KERN_CUDA(cudaGetLastError());
    return 0;
}

/* One pass over every device (fasted: the clustering epilogue; exact: its
 * PAIRS run with the pairs consumed on the device), then each device's
 * flatten (UNION) or merge (BORDER) kernel. */
static int fdb_pass(const kern_join_args *a, std::vector<fdb_dev> &dv, int mode, int exact,
                    kern_join_result *r)
{
    for (auto &d : dv)
        d.mode = mode;
    int rc;
    if (exact) {
        kern_join_args b = *a;
        b.mode = KJOIN_PAIRS;
        b.pair_dev = fdb_consume;
        rc = kern_exact_run(&b, r);
    } else {
        rc = a->ndevices > 0 ? kern_multi_run(a, r, fdb_run_queue) : fasted_run(a, r, &dv[0].post);
    }
    if (rc)
        return rc;
    const size_t n = a->n;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        if (mode == FASTED_CLU_UNION)
            clu_flatten_kernel<<<fdb_blocks(n), FDB_THREADS>>>(d.core, n, d.parent);
        else
            clu_merge_kernel<<<fdb_blocks(n), FDB_THREADS>>>(d.core, n, d.border, d.parent);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaDeviceSynchronize());
    }
    return 0;
}

/* The root of x in a host forest with parent[x] <= x. */
static uint32_t fdb_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

/* Several devices: every device's forest joined into the first one's, then
 * flattened (parents point down, so one pass in index order) and sent back
 * to every device. */
static int fdb_merge_union(std::vector<fdb_dev> &dv, size_t n, std::vector<uint32_t> &P,
                           double *t_xfer)
{
    const double t0 = kern_now();
    std::vector<uint32_t> t(n);
    KERN_CUDA(cudaSetDevice(dv[0].device));
    KERN_CUDA(cudaMemcpy(P.data(), dv[0].parent, n * 4, cudaMemcpyDeviceToHost));
    for (size_t k = 1; k < dv.size(); k++) {
        KERN_CUDA(cudaSetDevice(dv[k].device));
        KERN_CUDA(cudaMemcpy(t.data(), dv[k].parent, n * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) {
            if (t[i] == CLU_NONE || t[i] == i)
                continue;
            uint32_t a = fdb_find(P.data(), (uint32_t)i), b = fdb_find(P.data(), t[i]);
            if (a != b)
                P[std::max(a, b)] = std::min(a, b);
        }
    }
    for (size_t i = 0; i < n; i++)
        if (P[i] != CLU_NONE)
            P[i] = P[P[i]];
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        KERN_CUDA(cudaMemcpy(d.parent, P.data(), n * 4, cudaMemcpyHostToDevice));
    }
    *t_xfer += kern_now() - t0;
    return 0;
}

/* Both entries: exact 0 kern_fasted_cluster, 1 kern_exact_cluster. */
static int fdb_cluster(const kern_join_args *a0, const uint8_t *core, size_t minpts, uint32_t *root,
                       kern_join_result *res, int exact)
{
    memset(res, 0, sizeof *res);
    const char *who = exact ? "exact" : "fasted";
    const size_t n = a0->n;
    if (!a0->x || n == 0 || a0->d == 0 || a0->c0 || a0->q0 != 0 || a0->q1 != n || a0->nclu ||
        a0->rows || a0->origin_of)
        return kern_fail(KERN_EINVAL, "%s dbscan: bad run (n %zu, d %zu, rows [%zu, %zu))", who, n,
                         a0->d, a0->q0, a0->q1);
    if (n >= CLU_NONE)
        return kern_fail(KERN_EINVAL, "%s dbscan: %zu rows (at most %u)", who, n, CLU_NONE - 1);
    kern_join_args a = *a0;
    a.mode = KJOIN_COUNT; /* the non-PAIRS kernel; the hook sets its mode */
    a.counts = NULL;
    a.pair_fn = NULL;
    if (a.ndevices == 1) {
        a.device = a.devices[0];
        a.ndevices = 0;
    }
    const int nd = a.ndevices > 0 ? a.ndevices : 1;
    std::vector<fdb_dev> dv(nd);
    std::lock_guard<std::mutex> hold(g_fdb_mu);
    int rc = 0;
    double t_xfer = 0;
    kern_join_result ru, rb;
    memset(&ru, 0, sizeof ru);
    memset(&rb, 0, sizeof rb);
    for (int t = 0; t < nd; t++) {
        fdb_dev &d = dv[t];
        memset(&d, 0, sizeof d);
        d.device = a.ndevices > 0 ? a.devices[t] : a.device;
        d.post.ctx = &d;
        d.post.d2_bytes = 4;
        /* eps^2 as a float, exactly: the run's threshold is then a plain
         * run's, (float)(eps * eps) (fasted.cu rounds eps2_min up). */
        d.post.eps2_min = (double)(float)(a.eps * a.eps);
        d.post.params = fdb_params;
        if (d.device < 0 || d.device >= KERN_DEV_SLOTS)
            return kern_fail(KERN_ENODEV, "CUDA device %d does not exist", d.device);
    }
    for (auto &d : dv)
        g_fdb[d.device] = &d;
    for (auto &d : dv) {
        const double t0 = kern_now();
        KERN_CUDA_GOTO(cudaSetDevice(d.device), out);
        KERN_CUDA_GOTO(cudaMalloc((void **)&d.core, n), out);
        KERN_CUDA_GOTO(cudaMalloc((void **)&d.parent, n * 4), out);
        KERN_CUDA_GOTO(cudaMalloc((void **)&d.border, n * 4), out);
        KERN_CUDA_GOTO(cudaMemcpy(d.core, core, n, cudaMemcpyHostToDevice), out);
        /* The lists where they fit a quarter of what the device has free
         * and of the run's cap (else the border pass runs);
         * TCJOIN_DBSCAN_LISTS=0 sends the border through its pass (tests). */
        d.cap = minpts > 3 ? (unsigned)std::min(minpts - 2, (size_t)1 << 20) : 1u;
        size_t fr = 0, tot = 0;
        KERN_CUDA_GOTO(cudaMemGetInfo(&fr, &tot), out);
        if (a.mem_cap)
            fr = std::min(fr, a.mem_cap);
        const char *ev = getenv("TCJOIN_DBSCAN_LISTS");
        if (minpts > 0 && !(ev && strcmp(ev, "0") == 0) && n * ((size_t)d.cap + 1) * 4 <= fr / 4) {
            KERN_CUDA_GOTO(cudaMalloc((void **)&d.nb, n * (size_t)d.cap * 4), out);
            KERN_CUDA_GOTO(cudaMalloc((void **)&d.fill, n * 4 + 4), out);
            KERN_CUDA_GOTO(cudaMemset(d.fill, 0, n * 4 + 4), out);
            d.over = d.fill + n;
        }
        clu_init_kernel<<<fdb_blocks(n), FDB_THREADS>>>(d.core, n, d.parent, d.border);
        KERN_CUDA_GOTO(cudaGetLastError(), out);
        KERN_CUDA_GOTO(cudaDeviceSynchronize(), out);
        t_xfer += kern_now() - t0;
    }
    if ((rc = fdb_pass(&a, dv, FASTED_CLU_UNION, exact, &ru)))
        goto out;
    if (nd > 1) {
        std::vector<uint32_t> P(n);
        if ((rc = fdb_merge_union(dv, n, P, &t_xfer)))
            goto out;
    }
    {
        /* The border from the union pass's lists; the border pass where a
         * device kept none or one overflowed. */
        int need = 0;
        for (auto &d : dv) {
            if (!d.nb) {
                need = 1;
                continue;
            }
            unsigned over = 0;
            KERN_CUDA_GOTO(cudaSetDevice(d.device), out);
            fdb_list_border_kernel<<<fdb_blocks(n), FDB_THREADS>>>(d.core, n, d.nb, d.fill, d.cap,
                                                                   d.parent, d.border, d.over);
            KERN_CUDA_GOTO(cudaGetLastError(), out);
            KERN_CUDA_GOTO(cudaMemcpy(&over, d.over, sizeof over, cudaMemcpyDeviceToHost), out);
            need |= over != 0;
        }
        if (need) {
            if ((rc = fdb_pass(&a, dv, FASTED_CLU_BORDER, exact, &rb)))
                goto out;
        } else {
            for (auto &d : dv) {
                KERN_CUDA_GOTO(cudaSetDevice(d.device), out);
                clu_merge_kernel<<<fdb_blocks(n), FDB_THREADS>>>(d.core, n, d.border, d.parent);
                KERN_CUDA_GOTO(cudaGetLastError(), out);
                KERN_CUDA_GOTO(cudaDeviceSynchronize(), out);
            }
        }
    }
    {
        const double t0 = kern_now();
        KERN_CUDA_GOTO(cudaSetDevice(dv[0].device), out);
        KERN_CUDA_GOTO(cudaMemcpy(root, dv[0].parent, n * 4, cudaMemcpyDeviceToHost), out);
        if (nd > 1) {
            /* Core rows hold the same root everywhere; a non-core row the
             * least root any device saw among its core neighbours. */
            std::vector<uint32_t> t(n);
            for (int k = 1; k < nd; k++) {
                KERN_CUDA_GOTO(cudaSetDevice(dv[k].device), out);
                KERN_CUDA_GOTO(cudaMemcpy(t.data(), dv[k].parent, n * 4, cudaMemcpyDeviceToHost),
                               out);
                for (size_t i = 0; i < n; i++)
                    if (!core[i])
                        root[i] = std::min(root[i], t[i]);
            }
        }
        t_xfer += kern_now() - t0;
    }
out:
    for (auto &d : dv) {
        if (d.device >= 0 && d.device < KERN_DEV_SLOTS && g_fdb[d.device] == &d)
            g_fdb[d.device] = NULL;
        if (d.core || d.parent || d.border || d.nb || d.fill) {
            cudaSetDevice(d.device);
            cudaFree(d.core);
            cudaFree(d.parent);
            cudaFree(d.border);
            cudaFree(d.nb);
            cudaFree(d.fill);
        }
    }
    /* The union pass's record, the border pass's kernel time and launches
     * added; the array copies as transfers. */
    *res = ru;
    res->t_kernel += rb.t_kernel;
    res->launches += rb.launches;
    res->t_d2h += t_xfer;
    res->mem_peak =
        std::max(ru.mem_peak, rb.mem_peak) + 9 * n + (dv[0].nb ? 4 * n * (dv[0].cap + 1) : 0);
    {
        char v[96];
        snprintf(v, sizeof v, "%s", ru.variant);
        snprintf(res->variant, sizeof res->variant, "%.60s, dbscan union-find + border", v);
    }
    return rc;
}

extern "C" int kern_fasted_cluster(const kern_join_args *a, const uint8_t *core, size_t minpts,
                                   uint32_t *root, kern_join_result *r)
{
    return fdb_cluster(a, core, minpts, root, r, 0);
}

extern "C" int kern_exact_cluster(const kern_join_args *a, const uint8_t *core, size_t minpts,
                                  uint32_t *root, kern_join_result *r)
{
    return fdb_cluster(a, core, minpts, root, r, 1);
}
