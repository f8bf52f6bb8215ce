/* DBSCAN's three passes on the device over any PAIRS run that goes
 * through kern_drive (kern_dbscan, kernels.h): the tensor-core rows
 * (kern_fasted_run: FASTED's arithmetic in the row's format) and exact
 * (kern_exact_run, or over the cluster cut: kern_exact_clusters_*). Each
 * pass is the row's own PAIRS run whose pairs stay on the device: every
 * launch's pairs go to a consumer kernel on the launch's stream
 * (kern_join_args.pair_dev) before the next launch reuses the buffer, so
 * the eps-graph is exactly the one the same row's PAIRS run lists and
 * dbscan_generic (src/cluster/dbscan.c) clusters, no pair crosses to the host, and
 * the memory beyond the dataset is O(n) plus the run's bounded pair buffer.
 *   core:   each row's neighbours counted (atomicAdd), self added; the
 *           flags formed on the host from the counts (summed over the
 *           devices) and sent back;
 *   union:  core-core pairs into the lock-free union-find
 *           (kernels/clu_uf.cuh), then each root flattened; a non-core
 *           row's core neighbours kept in a list of minPts - 2 slots (it
 *           has at most minPts - 2 neighbours besides itself), from which
 *           the border follows without a join of its own;
 *   border: only where the lists did not fit (a quarter of the device's
 *           free memory) or overflowed: the run once more, each non-core
 *           row taking the least root among its core neighbours.
 * Why a consumer and not an epilogue in the MMA kernel: the union inside
 * the kernel's epilogue (a find and a compare-and-swap per pair, out of
 * line, beside 128 live accumulators) takes about four COUNTs where the
 * PAIRS run and its consumer take about one at 10^6 x 128, S = 64, and
 * the per-pair atomics of the PERPOINT epilogue about three where the
 * counted
 * pairs take about one COUNT too (docs/CLUSTERING.md). Over
 * several devices (fn shares the tiles through one queue) each device
 * keeps its own counts and union-find of the pairs it saw: counts summed,
 * forests merged on the host (O(n)) and sent back flattened, border
 * minima merged. A run over a layout (the cluster cut: run rows are a
 * layout's, kern_join_args.rows) has its pairs mapped to the dataset's
 * rows on the device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "epi_cluster.cuh" /* clu_init_kernel, clu_flatten_kernel, clu_merge_kernel */
#include "kern_consume.cuh"
#include "kern_drive.cuh" /* kern_now */

#define KDB_THREADS 256

enum { KDB_CORE, KDB_UNION, KDB_BORDER };

/* One device's arrays, indexed by dataset row. */
struct kdb_dev {
    int device;
    unsigned *cnt; /* core: neighbours besides the row itself */
    uint8_t *core;
    uint32_t *parent, *border;
    uint32_t *nb; /* the non-core rows' core neighbours (NULL: the border pass runs) */
    unsigned *fill, *over;
    unsigned cap;
    unsigned long long *tot; /* kdb_flags_kernel's sums */
    /* The core pass's pairs kept for the union (kdb_keep), one order of
     * each (i < j): room for kcap, *kn offered so far (past kcap: the room
     * overflowed, the union pass joins); kept after the pass. */
    uint32_t *ki, *kj;
    unsigned long long *kn;
    size_t kcap, kept;
    int over_keep;
    /* a layout's rows on the device (run row -> dataset row), uploaded
     * once a pass from the run's kern_join_args.rows */
    kern_rowmap rm;
};

/* The arrays a consumer launch reads, by value. */
struct kdb_arrays {
    unsigned *cnt;
    const uint8_t *core;
    uint32_t *parent, *border, *nb;
    unsigned *fill;
    unsigned cap;
    /* core pass: the room the pairs (i < j, as dataset rows) are kept in
     * and its count; NULL: none kept */
    uint32_t *ki, *kj;
    unsigned long long *kn, kcap;
};

/* The pair consumer has no context of its own: the devices' state by
 * ordinal and the pass, held under g_kdb_mu for the whole call. */
static std::mutex g_kdb_mu;
static kdb_dev *g_kdb[KERN_DEV_SLOTS];
static int g_kdb_pass;

/* What a consumer launch reads of device d (nothing kept). */
static kdb_arrays kdb_arrays_of(const kdb_dev &d)
{
    return kdb_arrays{d.cnt, d.core, d.parent, d.border, d.nb, d.fill, d.cap, NULL, NULL, NULL, 0};
}

static unsigned kdb_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1,
                              std::min((n + KDB_THREADS - 1) / KDB_THREADS, (size_t)4096));
}

/* One launch's pairs (i, j): every ordered pair within eps, both orders
 * in a symmetric run, the diagonal perhaps; map: run rows to the
 * dataset's (padding rows have no pairs but their own). In the core pass
 * each pair i < j is kept where c.ki is set (a warp's lanes take their
 * slots by one atomic). In the union, a run's pairs come in both orders
 * (a symmetric run emits both, an unsymmetric one each from its own tile,
 * over several devices each from the device whose tile it is): each
 * union is taken from one order, half the finds, and each non-core row's
 * core neighbour noted from its own; the kept pairs (one_order) hold one
 * order only, so both notes come from it. The warp's lanes iterate
 * together (the keep's ballot). */
static __global__ void kdb_pairs_kernel(kdb_arrays c, int pass, int one_order,
                                        const uint32_t *__restrict__ map,
                                        const uint32_t *__restrict__ pi,
                                        const uint32_t *__restrict__ pj, unsigned long long np)
{
    const unsigned lane = threadIdx.x & 31;
    for (unsigned long long t0 = (unsigned long long)blockIdx.x * blockDim.x; t0 < np;
         t0 += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long t = t0 + threadIdx.x;
        const bool in = t < np;
        uint32_t i = in ? pi[t] : 0, j = in ? pj[t] : 0;
        if (map && in) {
            i = map[i];
            j = map[j];
            if (i == KERN_ROW_PAD || j == KERN_ROW_PAD)
                i = j = 0;
        }
        if (c.ki) { /* uniform across the block */
            const unsigned want = __ballot_sync(0xffffffffu, in && i < j);
            unsigned long long at = 0;
            if (want && lane == (unsigned)(__ffs(want) - 1))
                at = atomicAdd(c.kn, (unsigned long long)__popc(want));
            at = __shfl_sync(0xffffffffu, at, __ffs(want ? want : 1u) - 1) +
                 __popc(want & ((1u << lane) - 1));
            if (in && i < j && at < c.kcap) {
                c.ki[at] = i;
                c.kj[at] = j;
            }
        }
        if (!in || i == j)
            continue;
        if (pass == KDB_CORE) {
            atomicAdd(&c.cnt[i], 1u);
            continue;
        }
        const uint8_t ci = c.core[i], cj = c.core[j];
        if (pass == KDB_UNION) {
            if (ci && cj) {
                if (i < j || one_order)
                    clu_union(c.parent, i, j);
            } else if (c.nb && !ci && cj) {
                clu_note(c.nb, c.fill, c.cap, i, j);
            } else if (c.nb && one_order && ci && !cj) {
                clu_note(c.nb, c.fill, c.cap, j, i);
            }
        } else if (!ci && cj) {
            atomicMin(&c.border[i], c.parent[j]);
        }
    }
}

/* The border from the lists the union pass kept (parent flattened): a
 * non-core row's least root among its core neighbours. A list that
 * overflowed (the union pass saw more than cap) sets *over. */
static __global__ void kdb_list_border_kernel(const uint8_t *__restrict__ core, size_t n,
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

/* kern_join_args.pair_dev: one launch's pairs, on its stream, into the
 * device's counts, union-find or border array. */
static int kdb_consume(void *ctx, const kern_join_args *run, void *stream,
                       const kern_pair_batch *pb)
{
    const uint32_t *pi = pb->pi, *pj = pb->pj;
    const unsigned long long np = pb->np;
    (void)ctx;
    kdb_dev *d = g_kdb[run->device];
    cudaStream_t st = (cudaStream_t)stream;
    kdb_arrays c = kdb_arrays_of(*d);
    if (g_kdb_pass == KDB_CORE && d->ki) {
        c.ki = d->ki;
        c.kj = d->kj;
        c.kn = d->kn;
        c.kcap = d->kcap;
    }
    return kern_consume_launch(&d->rm, run, st, 0, NULL, [&](const uint32_t *map) {
        kdb_pairs_kernel<<<kdb_blocks(np), KDB_THREADS, 0, st>>>(c, g_kdb_pass, 0, map, pi, pj, np);
    });
}

/* One pass: fn's PAIRS run with the pairs consumed on the devices, then
 * each device's flatten (union) or merge (border) kernel. */
static int kdb_pass(kern_join_fn fn, const kern_join_args *a, std::vector<kdb_dev> &dv, int pass,
                    kern_join_result *r)
{
    g_kdb_pass = pass;
    for (auto &d : dv)
        d.rm.src = NULL; /* a layout's rows may differ from run to run */
    kern_join_args b = *a;
    b.mode = KJOIN_PAIRS;
    b.pair_fn = NULL;
    b.pair_dev = kdb_consume;
    b.pair_dev_ctx = NULL;
    b.pair_dev_ids = 1; /* no pass reads a d2 */
    int rc = fn(&b, r);
    if (!rc && pass == KDB_CORE)
        for (auto &d : dv) /* how many the room took, or that it overflowed */
            if (d.ki) {
                unsigned long long kn = 0;
                KERN_CUDA(cudaSetDevice(d.device));
                KERN_CUDA(cudaMemcpy(&kn, d.kn, sizeof kn, cudaMemcpyDeviceToHost));
                d.over_keep = kn > d.kcap;
                d.kept = d.over_keep ? 0 : (size_t)kn;
            }
    if (rc || pass == KDB_CORE)
        return rc;
    const size_t n = a->n;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        if (pass == KDB_UNION)
            clu_flatten_kernel<<<kdb_blocks(n), KDB_THREADS>>>(d.core, n, d.parent);
        else
            clu_merge_kernel<<<kdb_blocks(n), KDB_THREADS>>>(d.core, n, d.border, d.parent);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaDeviceSynchronize());
    }
    return 0;
}

/* One device's core flags from its counts, its union-find and border
 * arrays initialised, and the core rows and the pairs (each row's
 * neighbours and itself) summed into tot[0], tot[1] by blocks. */
static __global__ void kdb_flags_kernel(const unsigned *__restrict__ cnt, size_t n,
                                        unsigned long long minpts, uint8_t *core, uint32_t *parent,
                                        uint32_t *border, unsigned long long *tot)
{
    unsigned long long nc = 0, np = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long m = (unsigned long long)cnt[i] + 1;
        const uint8_t c = m >= minpts;
        core[i] = c;
        parent[i] = c ? (uint32_t)i : CLU_NONE;
        border[i] = CLU_NONE;
        nc += c;
        np += m;
    }
    for (int o = 16; o; o >>= 1) {
        nc += __shfl_xor_sync(0xffffffffu, nc, o);
        np += __shfl_xor_sync(0xffffffffu, np, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&tot[0], nc);
        atomicAdd(&tot[1], np);
    }
}

/* The union pass over the pairs the core pass kept, where every device
 * kept all of its own (*done 1; else 0 and the pass joins): the same
 * consumer over the same eps-graph, without a second join. */
static int kdb_union_kept(std::vector<kdb_dev> &dv, size_t n, unsigned long long pairs,
                          kern_join_result *ru, int *done)
{
    *done = 0;
    for (auto &d : dv)
        if (!d.ki || d.over_keep)
            return 0;
    const double t0 = kern_now();
    uint64_t kept = 0;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        const kdb_arrays c = kdb_arrays_of(d);
        if (d.kept)
            kdb_pairs_kernel<<<kdb_blocks(d.kept), KDB_THREADS>>>(c, KDB_UNION, 1, NULL, d.ki, d.kj,
                                                                  d.kept);
        clu_flatten_kernel<<<kdb_blocks(n), KDB_THREADS>>>(d.core, n, d.parent);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaDeviceSynchronize());
        kept += d.kept;
    }
    memset(ru, 0, sizeof *ru);
    ru->pairs = pairs; /* the same eps-graph as the core run's */
    ru->t_kernel = kern_now() - t0;
    snprintf(ru->variant, sizeof ru->variant, "the core run's pairs kept (%llu edges)",
             (unsigned long long)kept);
    *done = 1;
    return 0;
}

/* The core flags from every device's counts (summed), sent to every
 * device with the union-find and border arrays initialised. One device:
 * formed there (kdb_flags_kernel), only the flags and two sums come
 * back. */
/* The call's io as the passes below use it: the caller's dbscan_dev_io
 * fields and the core pass's record. */
struct kern_dbscan_io {
    size_t minpts;
    uint8_t *core;
    uint32_t *root;
    size_t ncore;
    double core_s;
    kern_join_result rcore;
};

static int kdb_core_flags(std::vector<kdb_dev> &dv, size_t n, size_t minpts, kern_dbscan_io *io)
{
    if (dv.size() == 1) {
        kdb_dev &d = dv[0];
        unsigned long long tot[2] = {0, 0};
        KERN_CUDA(cudaSetDevice(d.device));
        KERN_CUDA(cudaMemsetAsync(d.tot, 0, sizeof tot));
        kdb_flags_kernel<<<kdb_blocks(n), KDB_THREADS>>>(d.cnt, n, minpts, d.core, d.parent,
                                                         d.border, d.tot);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaMemcpy(io->core, d.core, n, cudaMemcpyDeviceToHost));
        KERN_CUDA(cudaMemcpy(tot, d.tot, sizeof tot, cudaMemcpyDeviceToHost));
        io->ncore = (size_t)tot[0];
        io->rcore.pairs = tot[1];
        return 0;
    }
    std::vector<unsigned> h(n), t;
    KERN_CUDA(cudaSetDevice(dv[0].device));
    KERN_CUDA(cudaMemcpy(h.data(), dv[0].cnt, n * 4, cudaMemcpyDeviceToHost));
    for (size_t k = 1; k < dv.size(); k++) {
        t.resize(n);
        KERN_CUDA(cudaSetDevice(dv[k].device));
        KERN_CUDA(cudaMemcpy(t.data(), dv[k].cnt, n * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++)
            h[i] += t[i];
    }
    uint64_t pairs = n; /* every row is its own neighbour */
    size_t ncore = 0;
    for (size_t i = 0; i < n; i++) {
        pairs += h[i];
        ncore += io->core[i] = (uint64_t)h[i] + 1 >= minpts;
    }
    io->ncore = ncore;
    io->rcore.pairs = pairs;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        KERN_CUDA(cudaMemcpy(d.core, io->core, n, cudaMemcpyHostToDevice));
        clu_init_kernel<<<kdb_blocks(n), KDB_THREADS>>>(d.core, n, d.parent, d.border);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaDeviceSynchronize());
    }
    return 0;
}

/* The root of x in a host forest with parent[x] <= x. */
static uint32_t kdb_find(uint32_t *p, uint32_t x)
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
static int kdb_merge_union(std::vector<kdb_dev> &dv, size_t n)
{
    std::vector<uint32_t> P(n), t(n);
    KERN_CUDA(cudaSetDevice(dv[0].device));
    KERN_CUDA(cudaMemcpy(P.data(), dv[0].parent, n * 4, cudaMemcpyDeviceToHost));
    for (size_t k = 1; k < dv.size(); k++) {
        KERN_CUDA(cudaSetDevice(dv[k].device));
        KERN_CUDA(cudaMemcpy(t.data(), dv[k].parent, n * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) {
            if (t[i] == CLU_NONE || t[i] == i)
                continue;
            uint32_t a = kdb_find(P.data(), (uint32_t)i), b = kdb_find(P.data(), t[i]);
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
    return 0;
}

/* The border from the union pass's lists where every device kept them
 * and none overflowed (*need 0), else *need 1: the border pass runs. */
static int kdb_list_border(std::vector<kdb_dev> &dv, size_t n, int *need)
{
    *need = 0;
    for (auto &d : dv) {
        if (!d.nb) {
            *need = 1;
            continue;
        }
        unsigned over = 0;
        KERN_CUDA(cudaSetDevice(d.device));
        kdb_list_border_kernel<<<kdb_blocks(n), KDB_THREADS>>>(d.core, n, d.nb, d.fill, d.cap,
                                                               d.parent, d.border, d.over);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaMemcpy(&over, d.over, sizeof over, cudaMemcpyDeviceToHost));
        *need |= over != 0;
    }
    if (*need)
        return 0;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        clu_merge_kernel<<<kdb_blocks(n), KDB_THREADS>>>(d.core, n, d.border, d.parent);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaDeviceSynchronize());
    }
    return 0;
}

/* The answers: core rows hold the same root on every device; a non-core
 * row the least root any device saw among its core neighbours. */
static int kdb_roots(std::vector<kdb_dev> &dv, size_t n, const uint8_t *core, uint32_t *root)
{
    KERN_CUDA(cudaSetDevice(dv[0].device));
    KERN_CUDA(cudaMemcpy(root, dv[0].parent, n * 4, cudaMemcpyDeviceToHost));
    std::vector<uint32_t> t(dv.size() > 1 ? n : 0);
    for (size_t k = 1; k < dv.size(); k++) {
        KERN_CUDA(cudaSetDevice(dv[k].device));
        KERN_CUDA(cudaMemcpy(t.data(), dv[k].parent, n * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++)
            if (!core[i])
                root[i] = std::min(root[i], t[i]);
    }
    return 0;
}

/* The core pass's pairs kept for the union pass, one order of each, at
 * most this many (a device's 256 MB; TCJOIN_DBSCAN_KEEP=pairs sets it, 0
 * none): a set whose eps-graph fits is joined once, not twice. The room is
 * fixed, not the result's: a larger graph overflows it and the union pass
 * joins again, its pairs streamed as before. On the MNIST-like 6e4 x 784
 * set (3.7M pairs) the second join is over a quarter of a dbscan; the
 * 10^6 x 128 sets at S = 64 (3.2e7 edges) fit it. */
#define KDB_KEEP ((size_t)1 << 25)

static size_t kdb_keep(void)
{
    const char *ev = getenv("TCJOIN_DBSCAN_KEEP");
    if (!ev || !*ev)
        return KDB_KEEP;
    char *end;
    const unsigned long long v = strtoull(ev, &end, 10);
    return *end ? KDB_KEEP : (size_t)v;
}

/* One device's arrays; the lists where they fit a quarter of what the
 * device has free and of the run's cap (else the border pass runs);
 * TCJOIN_DBSCAN_LISTS=0 sends the border through its pass (tests); the
 * kept pairs' room where it fits an eighth of what is left. */
static int kdb_alloc(kdb_dev &d, size_t n, size_t minpts, size_t mem_cap)
{
    KERN_CUDA(cudaSetDevice(d.device));
    KERN_CUDA(kern_pool_malloc((void **)&d.cnt, n * 4 + 24));
    KERN_CUDA(cudaMemset(d.cnt, 0, n * 4));
    d.tot = (unsigned long long *)(d.cnt + (n + 1) / 2 * 2); /* 8-byte aligned */
    KERN_CUDA(kern_pool_malloc((void **)&d.core, n));
    KERN_CUDA(kern_pool_malloc((void **)&d.parent, n * 4));
    KERN_CUDA(kern_pool_malloc((void **)&d.border, n * 4));
    d.cap = minpts > 3 ? (unsigned)std::min(minpts - 2, (size_t)1 << 20) : 1u;
    size_t fr = 0, tot = 0;
    KERN_CUDA(kern_pool_meminfo(&fr, &tot));
    if (mem_cap)
        fr = std::min(fr, mem_cap);
    const char *ev = getenv("TCJOIN_DBSCAN_LISTS");
    if (!(ev && strcmp(ev, "0") == 0) && n * ((size_t)d.cap + 1) * 4 <= fr / 4) {
        KERN_CUDA(kern_pool_malloc((void **)&d.nb, n * (size_t)d.cap * 4));
        KERN_CUDA(kern_pool_malloc((void **)&d.fill, n * 4 + 4));
        KERN_CUDA(cudaMemset(d.fill, 0, n * 4 + 4));
        d.over = d.fill + n;
    }
    size_t keep = kdb_keep();
    KERN_CUDA(kern_pool_meminfo(&fr, &tot));
    if (mem_cap)
        fr = std::min(fr, mem_cap);
    keep = std::min(keep, fr / 8 / 8);
    if (keep > 0) {
        KERN_CUDA(kern_pool_malloc((void **)&d.ki, keep * 8 + 8));
        d.kj = d.ki + keep;
        d.kn = (unsigned long long *)(d.kj + keep); /* 8 keep bytes in: aligned */
        KERN_CUDA(cudaMemset(d.kn, 0, sizeof *d.kn));
        d.kcap = keep;
    }
    return 0;
}

static void kdb_free(kdb_dev &d)
{
    if (!(d.cnt || d.core || d.parent || d.border || d.nb || d.fill || d.rm.map || d.ki))
        return;
    kern_consume_free(d.device, {d.cnt, d.core, d.parent, d.border, d.nb, d.fill, d.rm.map, d.ki});
}

/* TCJOIN_TRACE: kdb_run's steps in milliseconds on stderr
 * (each step ends synchronised already: a run returns when its launches
 * are done, the copies between are synchronous). */
struct kdb_trace {
    int on;
    double t;
    char line[256];
    size_t len;
};

static void kdb_mark(kdb_trace &t, const char *step)
{
    kern_trace_mark(step);
    if (!t.on)
        return;
    const double now = kern_now();
    if (t.len < sizeof t.line)
        t.len += (size_t)snprintf(t.line + t.len, sizeof t.line - t.len, " %s %.3f", step,
                                  (now - t.t) * 1e3);
    t.t = now;
}

static int kdb_run(kern_join_fn fn, const kern_join_args *a, std::vector<kdb_dev> &dv,
                   kern_dbscan_io *io, kern_join_result *ru, kern_join_result *rb, kdb_trace &tr)
{
    const size_t n = a->n;
    double t0 = kern_now();
    int rc;
    for (auto &d : dv)
        if ((rc = kdb_alloc(d, n, io->minpts, a->mem_cap)))
            return rc;
    kdb_mark(tr, "alloc");
    if ((rc = kdb_pass(fn, a, dv, KDB_CORE, &io->rcore)))
        return rc;
    kdb_mark(tr, "core-run");
    if ((rc = kdb_core_flags(dv, n, io->minpts, io)))
        return rc;
    kdb_mark(tr, "flags");
    io->core_s = kern_now() - t0;
    if (io->ncore == 0) { /* every row noise */
        memset(io->root, 0xff, n * sizeof *io->root);
        return 0;
    }
    int need = 0, kept = 0;
    if ((rc = kdb_union_kept(dv, n, io->rcore.pairs, ru, &kept)))
        return rc;
    if (!kept && (rc = kdb_pass(fn, a, dv, KDB_UNION, ru)))
        return rc;
    kdb_mark(tr, kept ? "union-kept" : "union-run");
    if ((dv.size() > 1 && (rc = kdb_merge_union(dv, n))) || (rc = kdb_list_border(dv, n, &need)))
        return rc;
    kdb_mark(tr, "border");
    if (need && (rc = kdb_pass(fn, a, dv, KDB_BORDER, rb)))
        return rc;
    if (need)
        kdb_mark(tr, "border-run");
    rc = kdb_roots(dv, n, io->core, io->root);
    kdb_mark(tr, "roots");
    return rc;
}

static int kdb_call(kern_join_fn fn, const kern_join_args *a0, kern_dbscan_io *io,
                    kern_join_result *res)
{
    memset(res, 0, sizeof *res);
    memset(&io->rcore, 0, sizeof io->rcore);
    io->ncore = 0;
    io->core_s = 0;
    const size_t n = a0->n;
    if (!a0->x || n == 0 || a0->d == 0 || a0->c0 || a0->q0 != 0 || a0->q1 != n || a0->nclu ||
        a0->rows || a0->origin_of || a0->tiles)
        return kern_fail(KERN_EINVAL, "dbscan: bad run (n %zu, d %zu, rows [%zu, %zu))", n, a0->d,
                         a0->q0, a0->q1);
    if (n >= CLU_NONE)
        return kern_fail(KERN_EINVAL, "dbscan: %zu rows (at most %u)", n, CLU_NONE - 1);
    kern_join_args a = *a0;
    a.counts = NULL;
    std::vector<int> devs;
    const int drc = kern_consume_devices(&a, devs);
    if (drc)
        return drc;
    std::vector<kdb_dev> dv(devs.size());
    for (size_t t = 0; t < devs.size(); t++) {
        memset(&dv[t], 0, sizeof dv[t]);
        dv[t].device = devs[t];
    }
    std::lock_guard<std::mutex> hold(g_kdb_mu);
    for (auto &d : dv)
        g_kdb[d.device] = &d;
    kern_join_result ru, rb;
    memset(&ru, 0, sizeof ru);
    memset(&rb, 0, sizeof rb);
    const double t0 = kern_now();
    kdb_trace tr;
    memset(&tr, 0, sizeof tr);
    tr.on = kern_trace_on();
    tr.t = t0;
    const int rc = kdb_run(fn, &a, dv, io, &ru, &rb, tr);
    const size_t lists = (dv[0].nb ? 4 * n * ((size_t)dv[0].cap + 1) : 0) + 8 * dv[0].kcap;
    for (auto &d : dv) {
        g_kdb[d.device] = NULL;
        kdb_free(d);
    }
    kdb_mark(tr, "free");
    if (tr.on)
        fprintf(stderr, "dbscan trace (ms):%s\n", tr.line);
    /* The union pass's record with the border pass's kernel time and
     * launches added; the rest of the call's time (the arrays, the flags,
     * the merges) as transfers. */
    *res = ru;
    res->t_kernel += rb.t_kernel;
    res->launches += rb.launches;
    res->mem_peak =
        std::max(std::max(ru.mem_peak, rb.mem_peak), io->rcore.mem_peak) + 13 * n + lists;
    const double spent = kern_now() - t0 - io->core_s;
    res->t_d2h += std::max(0.0, spent - ru.t_kernel - rb.t_kernel);
    char v[96];
    snprintf(v, sizeof v, "%s", io->rcore.variant);
    snprintf(io->rcore.variant, sizeof io->rcore.variant, "%.60s, dbscan core (pairs counted)", v);
    snprintf(v, sizeof v, "%s", ru.variant[0] ? ru.variant : "no core point");
    snprintf(res->variant, sizeof res->variant, "%.60s, dbscan union-find + border", v);
    return rc;
}

extern "C" int kern_dbscan(kern_join_fn fn, const kern_join_args *a, dbscan_dev_io *dio,
                           kern_join_result *rcore, kern_join_result *r)
{
    kern_dbscan_io io;
    memset(&io, 0, sizeof io);
    io.minpts = dio->minpts;
    io.core = dio->core;
    io.root = dio->root;
    const int rc = kdb_call(fn, a, &io, r);
    dio->numbered = 0;
    dio->ncore = io.ncore;
    dio->core_s = io.core_s;
    dio->pairs = io.rcore.pairs;
    *rcore = io.rcore;
    return rc;
}
