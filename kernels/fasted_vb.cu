/* FASTED variants, second half: one block per SM, 32x32 warp tiles, no
 * swizzle, unaligned shared buffers. */
#include "fasted_kernel.cuh"

void fasted_kinfo_b(unsigned off, fasted_kinfo *k)
{
    switch (off) {
    case FASTED_OFF_RESIDENCY:
        fasted_kinfo_fill<64, 64, FASTED_STAGES, 1, true, true, true, true>(k);
        break;
    case FASTED_OFF_WARP_TILE:
        fasted_kinfo_fill<32, 32, FASTED_STAGES, 2, true, true, true, true>(k);
        break;
    case FASTED_OFF_SWIZZLE:
        fasted_kinfo_fill<64, 64, FASTED_STAGES, 2, true, true, false, true>(k);
        break;
    default:
        fasted_kinfo_fill<64, 64, FASTED_STAGES, 2, true, true, true, false>(k);
        break;
    }
}
