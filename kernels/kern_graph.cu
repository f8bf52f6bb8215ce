/* The radius-neighbours graph on the device (kern_graph_run, kernels.h):
 * a PAIRS run whose pairs stay where they are computed. Each launch's
 * pairs (kern_join_args.pair_dev) are appended, as keys i * n + j with
 * their d2, to a room that doubles where it runs short, each row's
 * entries counted; after the run one radix sort (CUB, only the bits
 * n * n needs) puts them in (i, j) order and a scan of the counts gives
 * the rows' offsets. So the graph costs one join, where the host's route
 * (src/cli/api_graph.c) needs a PERPOINT join for the rows' lengths
 * before the PAIRS join that fills them, and the entries cross to the
 * host once, already in place. Device memory: 32 bytes an entry (the
 * room and the sort's second buffer), until kern_graph_copy or
 * kern_graph_free; a device that cannot hold it returns KERN_ENOMEM (the
 * caller's host route). One device: a run over several returns
 * KERN_ENOMEM too, as each device's entries would need merging. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <cub/cub.cuh>

#include "kern_consume.cuh"

#define KGR_THREADS 256

struct kern_graph {
    int device;
    size_t n;
    unsigned long long invalid; /* n * n: a pair the graph leaves out, sorted last */
    int end_bit;                /* the bits a key needs */
    int include_self;
    uint64_t *key[2];
    double *d2[2];
    int sel;                 /* the buffers the sorted entries are in */
    size_t cap;              /* room in key[0], d2[0] */
    size_t len;              /* entries offered (the run's pairs) */
    unsigned long long *cnt; /* n + 1: each row's entries (the last 0) */
    long long *off;          /* n + 1: the scan of cnt */
    uint64_t nnz;
    void *tmp; /* CUB's */
    kern_rowmap rm;
};

/* One launch's pairs into the room from entry at: key i * n + j with its
 * d2 as the host's pair_fn would get it (kern_pair_batch), or the invalid
 * key for a padding row's pair and, without include_self, a self-pair. */
static __global__ void kgr_put_kernel(const uint32_t *__restrict__ map,
                                      const uint32_t *__restrict__ pi,
                                      const uint32_t *__restrict__ pj, const void *pd, int d2_bytes,
                                      double sc, unsigned long long np, unsigned long long n,
                                      unsigned long long invalid, int include_self, uint64_t *key,
                                      double *d2, unsigned long long *cnt)
{
    for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < np;
         t += (unsigned long long)gridDim.x * blockDim.x) {
        uint32_t i = pi[t], j = pj[t];
        bool ok = true;
        if (map) {
            i = map[i];
            j = map[j];
            ok = i != KERN_ROW_PAD && j != KERN_ROW_PAD;
        }
        if (i == j && !include_self)
            ok = false;
        key[t] = ok ? (unsigned long long)i * n + j : invalid;
        d2[t] = kern_pair_d2(pd, d2_bytes, sc, t);
        if (ok)
            atomicAdd(&cnt[i], 1ull);
    }
}

/* The room grown to hold want entries: the device's work waited for (a
 * launch on any stream may still be writing), the entries so far copied
 * over. */
static int kgr_grow(kern_graph *g, size_t want)
{
    size_t cap = g->cap ? g->cap : (size_t)1 << 22;
    while (cap < want)
        cap *= 2;
    uint64_t *k = NULL;
    double *v = NULL;
    int rc = kern_pool_alloc((void **)&k, cap * 8, "the radius graph's entries", 0);
    if (!rc)
        rc = kern_pool_alloc((void **)&v, cap * 8, "the radius graph's distances", 0);
    cudaError_t e = rc ? cudaSuccess : cudaDeviceSynchronize();
    if (!rc && e == cudaSuccess && g->len)
        e = cudaMemcpy(k, g->key[0], g->len * 8, cudaMemcpyDeviceToDevice);
    if (!rc && e == cudaSuccess && g->len)
        e = cudaMemcpy(v, g->d2[0], g->len * 8, cudaMemcpyDeviceToDevice);
    if (!rc && e != cudaSuccess)
        rc = kern_cuda_fail(e, "cudaMemcpy", __FILE__, __LINE__);
    if (rc) {
        kern_pool_free(k);
        kern_pool_free(v);
        return rc;
    }
    kern_pool_free(g->key[0]);
    kern_pool_free(g->d2[0]);
    g->key[0] = k;
    g->d2[0] = v;
    g->cap = cap;
    return 0;
}

/* kern_join_args.pair_dev: one launch's pairs, on its stream. */
static int kgr_consume(void *ctx, const kern_join_args *run, void *stream,
                       const kern_pair_batch *pb)
{
    kern_graph *g = (kern_graph *)ctx;
    const unsigned long long np = pb->np;
    if (!np)
        return 0;
    /* CUB's sort counts its items in an int */
    if (g->len + np > (size_t)INT_MAX)
        return kern_fail(KERN_ENOMEM, "the radius graph: more than %d entries on one device",
                         INT_MAX);
    if (g->len + np > g->cap) {
        const int rc = kgr_grow(g, g->len + np);
        if (rc)
            return rc;
    }
    cudaStream_t st = (cudaStream_t)stream;
    const size_t at = g->len;
    g->len += np;
    return kern_consume_launch(&g->rm, run, st, 0, NULL, [&](const uint32_t *map) {
        kgr_put_kernel<<<kern_grid_blocks(np, KGR_THREADS), KGR_THREADS, 0, st>>>(
            map, pb->pi, pb->pj, pb->pd, pb->d2_bytes, pb->d2_scale, np, g->n, g->invalid,
            g->include_self, g->key[0] + at, g->d2[0] + at, g->cnt);
    });
}

void kern_graph_free(kern_graph *g)
{
    if (!g)
        return;
    kern_consume_free(
        g->device, {g->key[0], g->key[1], g->d2[0], g->d2[1], g->cnt, g->off, g->tmp, g->rm.map});
    delete g;
}

/* The entries in (i, j) order and the rows' offsets, after the run. */
static int kgr_finish(kern_graph *g, int64_t *indptr)
{
    const size_t n = g->n;
    int rc = 0;
    if (g->len &&
        ((rc = kern_pool_alloc((void **)&g->key[1], g->len * 8, "the radius graph's sort", 0)) ||
         (rc = kern_pool_alloc((void **)&g->d2[1], g->len * 8, "the radius graph's sort", 0))))
        return rc;
    cub::DoubleBuffer<unsigned long long> keys((unsigned long long *)g->key[0],
                                               (unsigned long long *)g->key[1]);
    cub::DoubleBuffer<double> vals(g->d2[0], g->d2[1]);
    size_t tsort = 0, tscan = 0;
    if (g->len)
        KERN_CUDA(
            cub::DeviceRadixSort::SortPairs(NULL, tsort, keys, vals, (int)g->len, 0, g->end_bit));
    KERN_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tscan, g->cnt, g->off, (int)(n + 1)));
    const size_t tb = tsort > tscan ? tsort : tscan;
    if ((rc = kern_pool_alloc(&g->tmp, tb, "the radius graph's sort", 0)))
        return rc;
    void *tmp = g->tmp;
    if (g->len)
        KERN_CUDA(
            cub::DeviceRadixSort::SortPairs(tmp, tsort, keys, vals, (int)g->len, 0, g->end_bit));
    KERN_CUDA(cub::DeviceScan::ExclusiveSum(tmp, tscan, g->cnt, g->off, (int)(n + 1)));
    g->sel = keys.selector;
    if (vals.selector != keys.selector)
        return kern_fail(KERN_EGPU, "the radius graph: keys and distances sorted apart");
    KERN_CUDA(cudaMemcpy(indptr, g->off, (n + 1) * 8, cudaMemcpyDeviceToHost));
    KERN_CUDA(kern_pool_free(tmp));
    g->tmp = NULL;
    g->nnz = (uint64_t)indptr[n];
    if (g->nnz > g->len)
        return kern_fail(KERN_EGPU, "the radius graph: %llu entries counted, %zu listed",
                         (unsigned long long)g->nnz, g->len);
    return 0;
}

int kern_graph_run(kern_join_fn fn, const kern_join_args *a, graph_dev_io *io, kern_join_result *r)
{
    io->kept = NULL;
    kern_join_args b = *a;
    std::vector<int> devs;
    int rc = kern_consume_devices(&b, devs);
    if (rc)
        return rc;
    if (devs.size() != 1)
        return kern_fail(KERN_ENOMEM, "the radius graph is built on one device");
    if (b.tiles)
        return kern_fail(KERN_ENOMEM, "the radius graph is built by one process");
    const size_t n = a->n; /* the dataset's rows (a layout's are mapped to them) */
    kern_graph *g = new kern_graph();
    g->device = devs[0];
    g->n = n;
    g->invalid = (unsigned long long)g->n * g->n;
    g->end_bit = 64 - __builtin_clzll(g->invalid | 1);
    g->include_self = io->include_self;
    KERN_CUDA(cudaSetDevice(g->device));
    if (!(rc = kern_pool_alloc((void **)&g->cnt, (n + 1) * 8, "the radius graph's rows", 0)) &&
        !(rc = kern_pool_alloc((void **)&g->off, (n + 1) * 8, "the radius graph's rows", 0))) {
        const cudaError_t e = cudaMemset(g->cnt, 0, (n + 1) * 8);
        if (e != cudaSuccess)
            rc = kern_cuda_fail(e, "cudaMemset", __FILE__, __LINE__);
    }
    if (!rc)
        rc = kgr_grow(g, (size_t)8 * n);
    if (!rc) {
        b.mode = KJOIN_PAIRS;
        b.pair_fn = NULL;
        b.pair_dev = kgr_consume;
        b.pair_dev_ctx = g;
        b.pair_dev_ids = 0; /* the distances are the graph's */
        rc = fn(&b, r);
    }
    if (!rc) {
        KERN_CUDA(cudaSetDevice(g->device));
        KERN_CUDA(cudaDeviceSynchronize());
        rc = kgr_finish(g, io->indptr);
    }
    if (rc) {
        kern_graph_free(g);
        return rc;
    }
    io->kept = g;
    return 0;
}

/* The sorted entries' columns and distances (d2 > 0 ? sqrt(d2) : 0, as
 * the host's route writes them), in place: columns as int32 over the
 * sort's other key buffer. */
static __global__ void kgr_out_kernel(const uint64_t *__restrict__ key, double *d2, int32_t *col,
                                      unsigned long long nnz, unsigned long long n, int want_dist)
{
    for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < nnz;
         t += (unsigned long long)gridDim.x * blockDim.x) {
        col[t] = (int32_t)(key[t] % n);
        if (want_dist) {
            const double v = d2[t];
            d2[t] = v > 0 ? sqrt(v) : 0;
        }
    }
}

int kern_graph_copy(kern_graph *g, int32_t *indices, double *dist)
{
    if (!g->nnz)
        return 0;
    KERN_CUDA(cudaSetDevice(g->device));
    const int s = g->sel;
    int32_t *col = (int32_t *)g->key[1 - s];
    kgr_out_kernel<<<kern_grid_blocks(g->nnz, KGR_THREADS), KGR_THREADS>>>(
        g->key[s], g->d2[s], col, g->nnz, g->n, dist != NULL);
    KERN_CUDA(cudaGetLastError());
    KERN_CUDA(cudaMemcpy(indices, col, g->nnz * 4, cudaMemcpyDeviceToHost));
    if (dist)
        KERN_CUDA(cudaMemcpy(dist, g->d2[s], g->nnz * 8, cudaMemcpyDeviceToHost));
    return 0;
}

uint64_t kern_graph_entries(const kern_graph *g)
{
    return g->nnz;
}
