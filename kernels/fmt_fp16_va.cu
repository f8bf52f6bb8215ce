/* FP16 teaching variants, first half: no block buffer, no cp.async, one
 * stage, and the paper's pair (no cp.async with one stage). */
#include "fasted_mma.cuh"
#include "fmt_fp16.cuh"

bool fasted_fp16_va(unsigned off, const void **func, const void **func_pairs)
{
    switch (off) {
    case no_smem_buffer::OFF:
        fasted_mma_kernels<fmt_fp16, no_smem_buffer>(func, func_pairs);
        return true;
    case no_async_copy::OFF:
        fasted_mma_kernels<fmt_fp16, no_async_copy>(func, func_pairs);
        return true;
    case no_pipeline::OFF:
        fasted_mma_kernels<fmt_fp16, no_pipeline>(func, func_pairs);
        return true;
    case no_async_pipeline::OFF:
        fasted_mma_kernels<fmt_fp16, no_async_pipeline>(func, func_pairs);
        return true;
    }
    return false;
}
