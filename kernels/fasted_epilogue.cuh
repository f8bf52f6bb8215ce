/* The FASTED epilogue, used by both mainloops (kernels/fasted_mma.cuh,
 * fasted_wgmma.cuh): what is done with a warp's accumulators (F::acc:
 * FP32, or S32 for the integer formats) once its tile is multiplied. This
 * header only orchestrates: it builds the lane's fragment context
 * (epi_frag.cuh: rows, columns, s_i, the weights, the interior test) and
 * calls the role of the pass, each in its own header:
 *   the join's COUNT, PERPOINT, HIST         epi_join.cuh
 *   PAIRS (wgmma slice, mma.sync warp tile)  epi_pairs.cuh
 *     with exact's band decisions            epi_band.cuh
 *   the k-distance's three passes            epi_kdist.cuh
 *   HDBSCAN*'s masked nearest neighbour      epi_mrnn.cuh
 * A new role is one header and one branch here.
 *
 * The split keeps the code the compiler makes (a comparison of the SASS
 * of every kernel that includes this header before and after it; what
 * still differs is in docs/ARCHITECTURE.md), and that fixes a few things
 * that look arbitrary: the context and the interior test are formed here,
 * before the mode is tested, as the one-function epilogue formed them; the
 * wgmma slice's PAIRS pass forms its own (epi_pairs.cuh); the tests of
 * p.mode keep their order and their returns. */
#ifndef TCJ_FASTED_EPILOGUE_CUH
#define TCJ_FASTED_EPILOGUE_CUH

#include "epi_band.cuh"
#include "epi_frag.cuh"
#include "epi_join.cuh"
#include "epi_kdist.cuh"
#include "epi_mrnn.cuh"
#include "epi_pairs.cuh"

template <class F, int MT, int NT, bool PAIRS>
__device__ __forceinline__ void
fasted_epilogue(const fasted_params &p, typename F::acc (&acc)[MT][NT][4], const fasted_epi &w)
{
    static_assert(MT * NT * 4 % 32 == 0, "hit bits fill whole words");
    if constexpr (PAIRS && MT == 1) {
        epi_pairs_slice<F, MT, NT>(p, acc, w);
        return;
    }
    float si[MT][2];
    epi_frag<F, MT, NT> f(p, w, si);
    const unsigned wr0 = w.i0, wr1 = w.i0 + 16 * MT, wc0 = w.j0, wc1 = w.j0 + 8 * NT;
    f.interior = !w.diag && wr1 <= p.q1 && wc1 <= p.n && (wc0 >= wr1 || wc1 <= wr0);
    f.wint = p.sym ? 2u : 1u;
    if (!PAIRS && p.mode == FASTED_KD_MIN) {
        epi_kd_min(f, acc);
        return;
    }
    if (!PAIRS && (p.mode == FASTED_KD_HIST || p.mode == FASTED_KD_BAND)) {
        epi_kd_hist(f, acc);
        return;
    }
    if (!PAIRS && p.mode >= FASTED_KD_MRNN && p.mode <= FASTED_KD_MRPLIST) {
        epi_mrnn(f, acc);
        return;
    }
    if (!PAIRS && p.mode == KJOIN_COUNT)
        epi_join_count(f, acc);
    else if (!PAIRS && p.mode == KJOIN_PERPOINT)
        epi_join_perpoint(f, acc);
    else if constexpr (PAIRS)
        epi_pairs_tile(f, acc);
    else
        epi_join_hist(f, acc);
}

#endif
