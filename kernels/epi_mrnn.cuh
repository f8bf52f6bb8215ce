/* FASTED_KD_MRNN, HDBSCAN*'s masked nearest neighbour (kern_mst_round,
 * kernels/kern_mst.cu): each row's least mutual reachability
 * max(c_i, c_j, d2) over the columns j of other components, with that
 * column, into kd.best[i] as (float bits << 32) | j by an atomic minimum
 * (non-negative floats order as their bits). Values are the pass's
 * arithmetic (FP16 in, FP32 sums): an estimate, which kern_mst_round
 * bounds by exact's error bound and decides in FP64. The run is not
 * symmetric: every ordered pair is some row's, so each row sees all its
 * columns and the epilogue has only rows to reduce (a quad's lanes share
 * a row), one atomic a row a warp, and only where it lowers the value
 * read. A row of the component the round leaves out (component
 * MRNN_SKIPPED: a column of another component to every other row) wants
 * no answer: a lane whose rows are all such skips the tile.
 *
 * FASTED_KD_MRLIST, the same estimates for the candidates: each pair of
 * other components whose estimate is at most its row's bound kd.u2[i]
 * (negative: the row wants none, like a skipped one) is appended to
 * kd.cand.
 *
 * FASTED_KD_MRPAIR, with components numbered below kd.npair: each pair of
 * components' least estimate into kd.pmin, an atomic minimum. The pass's
 * rows go by component, so a warp's elements are mostly of one pair: each
 * lane keeps a running minimum while its pair stays, and a warp whose
 * lanes share one pair takes one atomic, only where it lowers the value
 * read. FASTED_KD_MRPLIST lists, as _MRLIST (each row's bound kd.u2), the
 * pairs whose pair of components it keeps (kd.pbound not negative): the
 * check in the rare appending loop, so the marking loop stays _MRLIST's
 * (a check there spills the shared kernels' registers). */
#ifndef TCJ_EPI_MRNN_CUH
#define TCJ_EPI_MRNN_CUH

#include "epi_frag.cuh"

#define MRNN_SKIPPED 0xfffffffeu /* comp of the rows whose answer is not wanted */
#define MRNN_PAD 0xffffffffu     /* comp of padding */

/* The slot of components a and b in the pair tables (npair K). */
__device__ __forceinline__ unsigned epi_mrnn_slot(unsigned a, unsigned b, unsigned K)
{
    return a < b ? a * K + b : b * K + a;
}

/* Column tile nt's two columns: their components and core distances (a
 * padding column: the component of no row, MRNN_PAD). */
template <class F, int MT, int NT>
__device__ __forceinline__ void epi_mrnn_cols(const epi_frag<F, MT, NT> &f, int nt,
                                              unsigned (&kj)[2], float (&cj)[2])
{
#pragma unroll
    for (int c = 0; c < 2; c++) {
        const unsigned j = f.col(nt, c);
        kj[c] = j < f.p.n ? __ldg(f.p.kd.comp + j) : MRNN_PAD;
        cj[c] = j < f.p.n ? __ldg(f.p.kd.core2 + j) : 0.0f;
    }
}

/* FASTED_KD_MRLIST: each lane's elements under their row's bound (and of
 * another component) marked by a cheap test over groups of n8 blocks,
 * then appended one by one outside the unrolled code (they are rare: a
 * few a listed row over the whole pass), so the pass keeps the hot loop's
 * size. */
template <class F, int MT, int NT>
__device__ __forceinline__ void
epi_mrnn_list(const epi_frag<F, MT, NT> &f, typename F::acc (&acc)[MT][NT][4],
              const unsigned (&ki)[MT][2], const float (&ci)[MT][2], const float (&ui)[MT][2])
{
    const fasted_params &p = f.p;
    constexpr int G = 16 / MT > 0 ? 16 / MT : 1; /* n8 blocks a 64-bit mark word covers */
#pragma unroll
    for (int g0 = 0; g0 < NT; g0 += G) {
        unsigned long long marks = 0;
#pragma unroll
        for (int t = 0; t < G; t++) {
            const int nt = g0 + t;
            if (nt >= NT)
                break;
            const float2 sj = f.sj(nt);
#pragma unroll
            for (int c = 0; c < 2; c++) {
                const unsigned j = f.col(nt, c);
                const unsigned kj = j < p.n ? __ldg(p.kd.comp + j) : MRNN_PAD;
                const float cj = j < p.n ? __ldg(p.kd.core2 + j) : 0.0f;
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int e = 2 * h + c;
                        const unsigned i = f.row(mt, e);
                        const float d2 =
                            F::to_f(f.dist(i, j, acc[mt][nt][e], f.si[mt][h], c ? sj.y : sj.x));
                        const bool hit = fmaxf(fmaxf(ci[mt][h], cj), d2) <= ui[mt][h] &&
                                         ki[mt][h] != kj && kj != MRNN_PAD;
                        marks |= (unsigned long long)hit << ((t * MT + mt) * 4 + e);
                    }
            }
        }
#pragma unroll 1
        while (marks) {
            const int b = __ffsll((long long)marks) - 1;
            marks &= marks - 1;
            const int t = b / (4 * MT), mt = (b / 4) % MT, e = b % 4;
            const unsigned i = f.row(mt, e), j = f.col(g0 + t, e);
            /* _MRPLIST: only a pair of components it keeps (its row's bound
             * is the largest of its own pairs'; FP64 takes each pair's) */
            if (p.mode == FASTED_KD_MRPLIST) {
                const unsigned K = p.kd.npair, a = __ldg(p.kd.comp + i), c = __ldg(p.kd.comp + j);
                if (a >= K || c >= K || !(__ldg(p.kd.pbound + epi_mrnn_slot(a, c, K)) >= 0.0f))
                    continue;
            }
            const unsigned long long k = atomicAdd(p.kd.ncand, 1ull);
            if (k < p.kd.cand_cap)
                p.kd.cand[k] = (unsigned long long)i << 32 | j;
        }
    }
}

/* FASTED_KD_MRPAIR (the file's comment). */
template <class F, int MT, int NT>
__device__ __forceinline__ void
epi_mrnn_pair(const epi_frag<F, MT, NT> &f, typename F::acc (&acc)[MT][NT][4],
              const unsigned (&ki)[MT][2], const float (&ci)[MT][2], bool live)
{
    const fasted_params &p = f.p;
    const unsigned K = p.kd.npair;
    unsigned slot = MRNN_PAD, m = ~0u; /* the running pair and its least (float bits) */
    /* Most lanes' rows are of one component and their columns of another
     * (both go by component, so the first and last column tell): the
     * least over every element, no pair an element. */
    const unsigned jf = f.col(0, 0), jl = f.col(NT - 1, 1);
    const unsigned k0 = ki[0][0];
    bool fast = live && jl < p.n && k0 < K;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            fast &= ki[mt][h] == k0;
    if (fast) {
        const unsigned c0 = __ldg(p.kd.comp + jf);
        fast = c0 == __ldg(p.kd.comp + jl) && c0 < K && c0 != k0;
        if (fast)
            slot = epi_mrnn_slot(k0, c0, K);
    }
    if (fast) {
        float mf = INFINITY;
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = f.sj(nt);
            float cj[2];
#pragma unroll
            for (int c = 0; c < 2; c++)
                cj[c] = __ldg(p.kd.core2 + f.col(nt, c));
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int h = e >> 1, c = e & 1;
                    const unsigned i = f.row(mt, e), j = f.col(nt, e);
                    const float d2 =
                        F::to_f(f.dist(i, j, acc[mt][nt][e], f.si[mt][h], c ? sj.y : sj.x));
                    mf = fminf(mf, fmaxf(fmaxf(ci[mt][h], cj[c]), d2));
                }
        }
        m = __float_as_uint(mf);
    } else if (live) {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = f.sj(nt);
            unsigned kj[2];
            float cj[2];
            epi_mrnn_cols(f, nt, kj, cj);
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int h = e >> 1, c = e & 1;
                    if (ki[mt][h] >= K || kj[c] >= K || ki[mt][h] == kj[c])
                        continue;
                    const unsigned i = f.row(mt, e), j = f.col(nt, e);
                    const float d2 =
                        F::to_f(f.dist(i, j, acc[mt][nt][e], f.si[mt][h], c ? sj.y : sj.x));
                    /* non-negative (a core distance is): its bits order as it */
                    const unsigned v = __float_as_uint(fmaxf(fmaxf(ci[mt][h], cj[c]), d2));
                    const unsigned s = epi_mrnn_slot(ki[mt][h], kj[c], K);
                    if (s != slot) {
                        if (slot != MRNN_PAD && m < __ldcg(p.kd.pmin + slot))
                            atomicMin(p.kd.pmin + slot, m);
                        slot = s;
                        m = v;
                    } else {
                        m = v < m ? v : m;
                    }
                }
        }
    }
    const unsigned s0 = __reduce_min_sync(FASTED_FULL_MASK, slot);
    if (__all_sync(FASTED_FULL_MASK, slot == s0 || slot == MRNN_PAD)) {
        if (s0 == MRNN_PAD)
            return;
        const unsigned mm = __reduce_min_sync(FASTED_FULL_MASK, slot == s0 ? m : ~0u);
        if (f.lane == 0 && mm < __ldcg(p.kd.pmin + s0))
            atomicMin(p.kd.pmin + s0, mm);
    } else if (slot != MRNN_PAD && m < __ldcg(p.kd.pmin + slot)) {
        atomicMin(p.kd.pmin + slot, m);
    }
}

template <class F, int MT, int NT>
__device__ __forceinline__ void epi_mrnn(const epi_frag<F, MT, NT> &f,
                                         typename F::acc (&acc)[MT][NT][4])
{
    const fasted_params &p = f.p;
    unsigned long long m[MT][2];
    unsigned ki[MT][2];
    float ci[MT][2], ui[MT][2];
    const bool pair = p.mode == FASTED_KD_MRPAIR || p.mode == FASTED_KD_MRPLIST;
    const bool list = p.mode == FASTED_KD_MRLIST || p.mode == FASTED_KD_MRPLIST;
    bool live = false;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const unsigned i = f.row(mt, 2 * h);
            m[mt][h] = ~0ull;
            ki[mt][h] = i < p.q1 ? __ldg(p.kd.comp + i) : MRNN_PAD;
            ci[mt][h] = i < p.q1 ? __ldg(p.kd.core2 + i) : 0.0f;
            ui[mt][h] = list && i < p.q1 ? __ldg(p.kd.u2 + i) : -1.0f;
            if (list && !(ui[mt][h] >= 0.0f))
                ki[mt][h] = MRNN_SKIPPED;
            live |= ki[mt][h] < MRNN_SKIPPED;
        }
    if (list) { /* no shuffles below: a lane with no listed row leaves */
        if (live)
            epi_mrnn_list(f, acc, ki, ci, ui);
        return;
    }
    if (pair) {
        epi_mrnn_pair(f, acc, ki, ci, live);
        return;
    }
    /* a lane whose rows all want no answer skips the tile; a branch around
     * it keeps every register index static, and every lane still meets the
     * shuffles */
    if (live) {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = f.sj(nt);
            unsigned kj[2];
            float cj[2];
            epi_mrnn_cols(f, nt, kj, cj);
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int h = e >> 1, c = e & 1;
                    const unsigned i = f.row(mt, e), j = f.col(nt, e);
                    const float d2 =
                        F::to_f(f.dist(i, j, acc[mt][nt][e], f.si[mt][h], c ? sj.y : sj.x));
                    const float v = fmaxf(fmaxf(ci[mt][h], cj[c]), d2);
                    const unsigned long long key =
                        (unsigned long long)__float_as_uint(v) << 32 | (unsigned long long)j;
                    if (ki[mt][h] != kj[c] && kj[c] != MRNN_PAD && key < m[mt][h])
                        m[mt][h] = key;
                }
        }
    }
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            unsigned long long x = m[mt][h];
            unsigned long long y = __shfl_xor_sync(FASTED_FULL_MASK, x, 1);
            x = y < x ? y : x;
            y = __shfl_xor_sync(FASTED_FULL_MASK, x, 2);
            x = y < x ? y : x;
            const unsigned i = f.row(mt, 2 * h);
            if ((f.lane & 3) == 0 && ki[mt][h] < MRNN_SKIPPED && x != ~0ull &&
                x < __ldcg(p.kd.best + i))
                atomicMin(p.kd.best + i, x);
        }
}

#endif
