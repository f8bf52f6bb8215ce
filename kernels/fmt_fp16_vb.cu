/* FP16 teaching variants, second half: one block per SM, 32x32 warp tiles,
 * no swizzle, unaligned shared buffers. */
#include "fasted_mma.cuh"
#include "fmt_fp16.cuh"

bool fasted_fp16_vb(unsigned off, const void **func, const void **func_pairs)
{
    switch (off) {
    case no_residency::OFF:
        fasted_mma_kernels<fmt_fp16, no_residency>(func, func_pairs);
        return true;
    case no_warp_tile::OFF:
        fasted_mma_kernels<fmt_fp16, no_warp_tile>(func, func_pairs);
        return true;
    case no_swizzle::OFF:
        fasted_mma_kernels<fmt_fp16, no_swizzle>(func, func_pairs);
        return true;
    case no_align::OFF:
        fasted_mma_kernels<fmt_fp16, no_align>(func, func_pairs);
        return true;
    }
    return false;
}
