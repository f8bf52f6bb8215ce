/* FASTED variants, first half: all on (also used with ordering off, which
 * changes only the tile enumeration), no block buffer, no cp.async, one
 * stage. Split from fasted_vb.cu so the two compile in parallel. */
#include "fasted_kernel.cuh"

void fasted_kinfo_a(unsigned off, fasted_kinfo *k)
{
    switch (off) {
    case FASTED_OFF_SMEM_BUFFER:
        fasted_kinfo_fill<64, 64, FASTED_STAGES, 2, false, true, true, true>(k);
        break;
    case FASTED_OFF_ASYNC_COPY:
        fasted_kinfo_fill<64, 64, FASTED_STAGES, 2, true, false, true, true>(k);
        break;
    case FASTED_OFF_PIPELINE:
        fasted_kinfo_fill<64, 64, 1, 2, true, true, true, true>(k);
        break;
    default:
        fasted_kinfo_fill<64, 64, FASTED_STAGES, 2, true, true, true, true>(k);
        break;
    }
}
