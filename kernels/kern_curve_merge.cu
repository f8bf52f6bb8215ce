/* DBSCAN curve's merging after a join, on the device where the join left
 * its lists (kern_curve_merge_run, kernels.h): src/cluster/curve_merging.c's
 * curve_merging_run, the same passes and the same results (the components, their
 * bounds, the forest's edges, whether another join is needed), without the
 * lists (1,032 bytes a point) crossing to the host and without the host's
 * O(n) passes: on gauss 10^6 x 128 the host's merging takes some three
 * times the core join's collect, and the lists' copy back most of that
 * collect (docs/BENCHMARKS.md).
 *
 * A pass, as the host's: every point of a component that changed in the
 * last pass (chg) finds its lightest list edge out (its cursor past the
 * edges inside, which stay inside) or, its list all inside, its bound;
 * each changed component's lightest edge out (cand) and lightest bound
 * (stat) are reduced from its members afresh; a component whose edge out
 * is lighter than its bound takes it (the cut property), the lesser root
 * of a pair that chose one edge taking it once, linked by a compare-and-
 * swap of the greater root's parent (every root its component's least
 * row); the forest's edges appended by an atomic counter (their order is
 * free: the curve sorts them). The host reduced stat once a point and
 * passed it on at each link; here a changed component's stat is the
 * minimum over its members again, the same value (a member's bound does
 * not change), with no reduction through the links.
 *
 * (w, a, b) minima without a 128-bit atomic (sm_80 too): the weight's
 * order-preserving key by atomicMin in one kernel, then the ends (a << 32
 * | b) of the edges of that weight in the next. A warp whose points share
 * one root (a large component's members, a point a lane) reduces in
 * registers first and sends one atomic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "kern_consume.cuh"
#include "kern_curve_later.cuh"
#include "kern_curve_tail.cuh"

#define KCM_THREADS 256
#define KCM_L CURVE_LIST
#define KCM_NONE (~0ull)
#define KCM_FULL 0xffffffffu

enum { KCM_ACTIVE = 0, KCM_OUT = 1, KCM_INSIDE = 2 };

struct kcm_state {
    size_t n;
    curve_list *list;
    const double *kb;
    uint32_t *parent, *comp;
    uint8_t *cur, *kind, *chg;
    curve_edge *res, *best, *bound;
    curve_edge *fall;   /* room for n - 1 edges: the earlier rounds' (on the host) first */
    curve_edge *forest; /* fall + the earlier rounds' count: this merging's edges */
    unsigned long long *cw, *cab, *sw, *sab;
    unsigned int *ctr; /* [0] forest edges so far, [1] roots open this pass */
    int fresh;         /* every row its own component: comp made here, not copied up */
};

__device__ __forceinline__ bool kcm_before(const curve_edge &x, const curve_edge &y)
{
    if (x.w != y.w)
        return x.w < y.w;
    if (x.a != y.a)
        return x.a < y.a;
    return x.b < y.b;
}

__device__ __forceinline__ unsigned long long kcm_ends(const curve_edge &e)
{
    return (unsigned long long)e.a << 32 | e.b;
}

__device__ __forceinline__ curve_edge kcm_edge(unsigned long long wk, unsigned long long ab)
{
    curve_edge e;
    e.w = kern_f64_unkey(wk);
    e.a = (uint32_t)(ab >> 32);
    e.b = (uint32_t)ab;
    return e;
}

/* min into base[r] of v where has; every lane of the warp calls it. */
__device__ __forceinline__ void kcm_min(unsigned long long *base, uint32_t r, unsigned long long v,
                                        bool has)
{
    const unsigned who = __ballot_sync(KCM_FULL, has);
    if (!who)
        return;
    const int lead = __ffs(who) - 1;
    const uint32_t rl = __shfl_sync(KCM_FULL, r, lead);
    if (__all_sync(KCM_FULL, !has || r == rl)) {
        unsigned long long m = has ? v : KCM_NONE;
        for (int o = 16; o; o >>= 1) {
            const unsigned long long x = __shfl_xor_sync(KCM_FULL, m, o);
            m = x < m ? x : m;
        }
        if ((int)(threadIdx.x & 31) == lead)
            atomicMin(base + rl, m);
    } else if (has) {
        atomicMin(base + r, v);
    }
}

/* x's root, halving the path on the way: a pointer moved to a
 * grandparent is still an ancestor whatever links race with it (a root's
 * own entry is only ever written by the link's compare-and-swap). */
__device__ __forceinline__ uint32_t kcm_find(uint32_t *p, uint32_t x)
{
    volatile uint32_t *v = p;
    for (;;) {
        const uint32_t y = v[x];
        if (y == x)
            return x;
        const uint32_t z = v[y];
        if (z != y)
            v[x] = z;
        x = z;
    }
}

/* Each list in ascending (w, a, b) order (a join leaves a max-heap), its
 * cursor at its first edge; every point active, every component changed.
 * The device's joins leave each list sorted descending (a heap too):
 * reversed in place, not sorted (an insertion sort's worst case, half
 * the merging's set-up). */
static __global__ void kcm_init_kernel(kcm_state s)
{
    const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= s.n)
        return;
    curve_list *l = s.list + p;
    const uint32_t len = l->len < KCM_L ? l->len : KCM_L;
    bool down = true;
    for (uint32_t k = 1; k < len && down; k++)
        down = kcm_before(l->e[k], l->e[k - 1]);
    if (down) {
        for (uint32_t k = 0; k < len / 2; k++) {
            const curve_edge x = l->e[k];
            l->e[k] = l->e[len - 1 - k];
            l->e[len - 1 - k] = x;
        }
    } else {
        curve_edge e[KCM_L];
        for (uint32_t k = 0; k < len; k++)
            e[k] = l->e[k];
        for (uint32_t k = 1; k < len; k++) {
            const curve_edge x = e[k];
            uint32_t j = k;
            for (; j > 0 && kcm_before(x, e[j - 1]); j--)
                e[j] = e[j - 1];
            e[j] = x;
        }
        for (uint32_t k = 0; k < len; k++)
            l->e[k] = e[k];
    }
    s.cur[p] = 0;
    s.kind[p] = KCM_ACTIVE;
    s.chg[p] = 1;
    if (s.fresh)
        s.comp[p] = (uint32_t)p;
}

/* A pass's start: parent flattened to the roots (comp), each changed
 * root's minima cleared, the open flag cleared. */
static __global__ void kcm_reset_kernel(kcm_state s)
{
    const size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v == 0)
        s.ctr[1] = 0;
    if (v >= s.n)
        return;
    s.parent[v] = s.comp[v];
    if (s.comp[v] == v && s.chg[v]) {
        s.cw[v] = s.sw[v] = kern_f64_key(INFINITY);
        s.cab[v] = s.sab[v] = KCM_NONE;
    }
}

/* The weights: each point of a changed component its lightest list edge
 * out (cw), or, its list all inside, its bound (sw): a point's next edge
 * out is heavier than a full list's heaviest and, for lists from the K
 * nearest (kb), not lighter than kb[p] (below every edge of weight kb[p]
 * is {kb[p], 0, 0}). An inside point stays inside: its bound is kept. */
static __global__ void kcm_scan_kernel(kcm_state s)
{
    const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    bool out = false, in = false;
    uint32_t rp = 0;
    unsigned long long wk = 0;
    if (p < s.n) {
        rp = s.comp[p];
        if (s.chg[rp]) {
            if (s.kind[p] == KCM_INSIDE) {
                in = true;
                wk = kern_f64_key(s.res[p].w);
            } else {
                const curve_list *l = s.list + p;
                const uint32_t len = l->len < KCM_L ? l->len : KCM_L;
                uint32_t c = s.cur[p];
                for (; c < len; c++) {
                    const uint32_t q = l->e[c].a == p ? l->e[c].b : l->e[c].a;
                    if (s.comp[q] != rp)
                        break;
                }
                s.cur[p] = (uint8_t)c;
                curve_edge r;
                if (c < len) {
                    r = l->e[c];
                    out = true;
                    s.kind[p] = KCM_OUT;
                } else {
                    r.w = INFINITY;
                    r.a = r.b = UINT32_MAX;
                    if (len == KCM_L)
                        r = l->e[KCM_L - 1];
                    if (s.kb && s.kb[p] != INFINITY && s.kb[p] <= r.w) {
                        r.w = s.kb[p];
                        r.a = r.b = 0;
                    }
                    in = true;
                    s.kind[p] = KCM_INSIDE;
                }
                s.res[p] = r;
                wk = kern_f64_key(r.w);
            }
        }
    }
    kcm_min(s.cw, rp, wk, out);
    kcm_min(s.sw, rp, wk, in);
}

/* The ends: among the edges of each minimum's weight, the least (a, b). */
static __global__ void kcm_ends_kernel(kcm_state s)
{
    const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    bool out = false, in = false;
    uint32_t rp = 0;
    unsigned long long ab = 0;
    if (p < s.n) {
        rp = s.comp[p];
        if (s.chg[rp]) {
            const curve_edge r = s.res[p];
            const unsigned long long wk = kern_f64_key(r.w);
            ab = kcm_ends(r);
            out = s.kind[p] == KCM_OUT && wk == s.cw[rp];
            in = s.kind[p] == KCM_INSIDE && wk == s.sw[rp];
        }
    }
    kcm_min(s.cab, rp, ab, out);
    kcm_min(s.sab, rp, ab, in);
}

/* Each root's bound and proved edge (best; none, and the pass open,
 * where its edge out is not lighter than its bound: the next join
 * decides), its changed mark cleared. */
static __global__ void kcm_roots_kernel(kcm_state s)
{
    const size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= s.n || s.comp[v] != v)
        return;
    s.chg[v] = 0;
    curve_edge b = kcm_edge(s.cw[v], s.cab[v]);
    const curve_edge d = kcm_edge(s.sw[v], s.sab[v]);
    if (d.w != INFINITY && !kcm_before(b, d)) {
        b.w = INFINITY;
        b.a = b.b = UINT32_MAX;
        atomicAdd(s.ctr + 1, 1u);
    }
    s.best[v] = b;
    s.bound[v] = d;
}

/* Each root's edge into the forest where it joins two components: taken
 * once, by the lesser root, where two roots chose the same edge. */
static __global__ void kcm_links_kernel(kcm_state s)
{
    const size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= s.n || s.comp[v] != v)
        return;
    const curve_edge e = s.best[v];
    if (e.w == INFINITY)
        return;
    const uint32_t u = s.comp[e.a] == v ? s.comp[e.b] : s.comp[e.a];
    const curve_edge f = s.best[u];
    if (u < v && f.a == e.a && f.b == e.b)
        return;
    for (;;) {
        uint32_t ra = kcm_find(s.parent, (uint32_t)v), rb = kcm_find(s.parent, u);
        if (ra > rb) {
            const uint32_t x = ra;
            ra = rb;
            rb = x;
        }
        if (atomicCAS(s.parent + rb, rb, ra) == rb)
            break;
    }
    s.forest[atomicAdd(s.ctr, 1u)] = e;
}

/* Every row's root into comp (parent read only); a root that was linked
 * marks the component it joined changed. */
static __global__ void kcm_flat_kernel(kcm_state s)
{
    const size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= s.n)
        return;
    const uint32_t *p = s.parent;
    uint32_t x = (uint32_t)v;
    while (p[x] != x)
        x = p[x];
    if (s.comp[v] == v && x != v)
        s.chg[x] = 1;
    s.comp[v] = x;
}

/* The state's arrays carved from one allocation (one cudaMalloc, not a
 * dozen), each at a 16-byte boundary. */
static size_t kcm_carve(kcm_state *s, char *base, size_t n)
{
    size_t at = 0;
    auto take = [&](size_t bytes) {
        char *p = base ? base + at : NULL;
        at += (bytes + 15) / 16 * 16;
        return (void *)p;
    };
    s->parent = (uint32_t *)take(n * 4);
    s->comp = (uint32_t *)take(n * 4);
    s->cur = (uint8_t *)take(n);
    s->kind = (uint8_t *)take(n);
    s->chg = (uint8_t *)take(n);
    s->res = (curve_edge *)take(n * sizeof(curve_edge));
    s->best = (curve_edge *)take(n * sizeof(curve_edge));
    s->bound = (curve_edge *)take(n * sizeof(curve_edge));
    s->fall = s->forest = (curve_edge *)take(n * sizeof(curve_edge));
    s->cw = (unsigned long long *)take(n * 8);
    s->cab = (unsigned long long *)take(n * 8);
    s->sw = (unsigned long long *)take(n * 8);
    s->sab = (unsigned long long *)take(n * 8);
    s->ctr = (unsigned int *)take(2 * sizeof(unsigned int));
    return at;
}

/* TCJOIN_TRACE: the merging's steps (ms) on stderr */
struct kcm_trace {
    double t[4];
};

static int kcm_passes(kcm_state &s, curve_merge *m, kcm_trace &tr)
{
    const size_t n = s.n;
    const unsigned blocks = (unsigned)((n + KCM_THREADS - 1) / KCM_THREADS);
    double t = kern_now();
    /* the core join's round: every row its own (no copy from pageable
     * memory, 240 KB on the MNIST-like curve) */
    s.fresh = m->fresh;
    if (!s.fresh)
        KERN_CUDA(cudaMemcpy(s.comp, m->comp, n * 4, cudaMemcpyHostToDevice));
    s.forest = s.fall + m->nf;
    KERN_CUDA(cudaMemset(s.ctr, 0, 2 * sizeof(unsigned int)));
    kcm_init_kernel<<<blocks, KCM_THREADS>>>(s);
    KERN_CUDA(cudaGetLastError());
    KERN_CUDA(cudaDeviceSynchronize());
    tr.t[1] = kern_now() - t;
    t = kern_now();
    unsigned int ctr[2] = {0, 0}, had = 0;
    for (;;) {
        kcm_reset_kernel<<<blocks, KCM_THREADS>>>(s);
        kcm_scan_kernel<<<blocks, KCM_THREADS>>>(s);
        kcm_ends_kernel<<<blocks, KCM_THREADS>>>(s);
        kcm_roots_kernel<<<blocks, KCM_THREADS>>>(s);
        kcm_links_kernel<<<blocks, KCM_THREADS>>>(s);
        kcm_flat_kernel<<<blocks, KCM_THREADS>>>(s);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaMemcpy(ctr, s.ctr, sizeof ctr, cudaMemcpyDeviceToHost));
        m->passes++;
        if (ctr[0] == had)
            break;
        if (ctr[0] > n - 1 - m->nf) /* a forest of n rows has at most n - 1 edges */
            return kern_fail(KERN_EINVAL, "dbscan curve: %u forest edges on %zu rows", ctr[0], n);
        had = ctr[0];
    }
    tr.t[2] = kern_now() - t;
    t = kern_now();
    /* The later join's rows where the components are (its state freed
     * below), and where there are none the curve's end here: its sorted
     * arrays instead of the components and bounds (kern_curve_tail.cuh;
     * short of room, as without it). The earlier rounds' edges go up only
     * then. */
    size_t lm = 0, lb = 0;
    int rows = 0;
    if (m->core_dev && m->later && ctr[1] > 1) {
        const kcl_in li = {n, m->core_dev, s.comp, s.bound, m->part};
        const int lrc = kcl_rows(&li, m->later, &lm, &lb);
        if (lrc && lrc != KERN_ENOMEM)
            return lrc;
        rows = lrc == 0;
        kern_trace_mark("merging: later rows");
    }
    if (m->core_dev && m->take && (ctr[1] <= 1 || (rows && lm == 0))) {
        const kct_in in = {n,      m->core_dev,    m->reach_dev, m->reach_host,
                           s.fall, m->nf + ctr[0], m->forest,    m->nf};
        int fin = 0;
        const int frc = kct_finish(&in, m->take, m->take_ctx, &fin);
        if (frc && frc != KERN_ENOMEM)
            return frc;
        if (fin) {
            m->nf += ctr[0];
            m->open = ctr[1];
            m->done = m->finished = 1;
            tr.t[3] = kern_now() - t;
            return 0;
        }
    }
    KERN_CUDA(cudaMemcpy(m->comp, s.comp, n * 4, cudaMemcpyDeviceToHost));
    if (!rows) /* the host's curve_later_rows reads them */
        KERN_CUDA(cudaMemcpy(m->bound, s.bound, n * sizeof(curve_edge), cudaMemcpyDeviceToHost));
    if (ctr[0])
        KERN_CUDA(cudaMemcpy(m->forest + m->nf, s.forest, ctr[0] * sizeof(curve_edge),
                             cudaMemcpyDeviceToHost));
    m->later_done = rows;
    m->nlater = lm;
    m->nbig = lb;
    m->nf += ctr[0];
    m->open = ctr[1];
    m->done = 1;
    tr.t[3] = kern_now() - t;
    return 0;
}

extern "C" int kern_curve_merge_run(size_t n, curve_list *list, const double *kb, curve_merge *m)
{
    m->done = m->finished = m->later_done = 0;
    m->open = 0;
    if (n == 0 || n >= KERN_ROW_PAD)
        return kern_fail(KERN_EINVAL, "dbscan curve: bad merging (n %zu)", n);
    kcm_state s;
    memset(&s, 0, sizeof s);
    s.n = n;
    s.list = list;
    s.kb = kb;
    const size_t bytes = kcm_carve(&s, NULL, n);
    char *base = NULL;
    const double t0 = kern_now();
    kcm_trace tr = {{0, 0, 0, 0}};
    int rc = kern_consume_malloc(&base, bytes, "dbscan curve merging");
    if (rc)
        return rc;
    kcm_carve(&s, base, n);
    tr.t[0] = kern_now() - t0;
    const size_t passes = m->passes;
    rc = kcm_passes(s, m, tr);
    const cudaError_t e = kern_pool_free(base);
    if (!rc && e != cudaSuccess)
        rc = kern_cuda_fail(e, "kern_pool_free", __FILE__, __LINE__);
    const double secs = kern_now() - t0;
    m->seconds += secs; /* the caller's sum over its rounds */
    if (kern_trace_on())
        fprintf(stderr,
                "dbscan curve merge trace (ms): state %.3f, up+sort %.3f, %zu passes %.3f, "
                "%s %.3f, all %.3f; %zu forest edges\n",
                tr.t[0] * 1e3, tr.t[1] * 1e3, m->passes - passes, tr.t[2] * 1e3,
                m->finished ? "the curve's end" : "down", tr.t[3] * 1e3, secs * 1e3, m->nf);
    return rc;
}
