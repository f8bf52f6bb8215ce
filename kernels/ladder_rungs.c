/* The teaching ladder's rung table and its tile checks (kernels.h, "The
 * teaching ladder"). Plain C: a build without CUDA lists, explains and
 * validates the rungs too. Tile numbers come from kernels/ladder_cfg.h,
 * which the rung files static_assert against. */
#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "ladder_cfg.h"

#define CUDA_FP32 "cuda-fp32"
#define TC_FP16 "tc-fp16"

/* min_cc: the own rungs' files are built as sm_80 and sm_90 code only
 * (the Makefile's LADDER_SM: build time), so every rung needs 8.0 even
 * where its instructions are older (WMMA: 7.0). */
/* clang-format off */
const kern_ladder_rung kern_ladder_rungs[] = {
    {1, "naive", "one thread per pair: (a-b)^2 summed over k from global memory",
     "kernels/ladder/r01_naive.cu", CUDA_FP32, "fp32", NULL, 0, 80,
     LADDER_R01_BM, LADDER_R01_BN, 0, 0, 0, 1, 1, 0, LADDER_R01_TH, 0, 0},
    {2, "smem", "a block stages 32-value k slices of its rows in shared memory and reuses them",
     "kernels/ladder/r02_smem.cu", CUDA_FP32, "fp32", NULL, 0, 80,
     LADDER_R02_BM, LADDER_R02_BN, LADDER_R02_BK, 0, 0, 1, 1, 1, LADDER_R02_TH, 0, 1},
    {3, "gemm-form", "|a|^2 + |b|^2 - 2a.b: one FMA a value instead of a subtract and an FMA; "
     "the join is now a GEMM",
     "kernels/ladder/r03_gemm_form.cu", CUDA_FP32, "fp32", NULL, 0, 80,
     LADDER_R03_BM, LADDER_R03_BN, LADDER_R03_BK, 0, 0, 1, 1, 1, LADDER_R03_TH, 0, 2},
    {4, "reg-tile", "each thread keeps an 8x8 tile of dot products in registers (SGEMM's 2-D "
     "block tiling)",
     "kernels/ladder/r04_reg_tile.cu", CUDA_FP32, "fp32", NULL, 0, 80,
     LADDER_R04_BM, LADDER_R04_BN, LADDER_R04_BK, 0, 0, LADDER_R04_TM, LADDER_R04_TN, 1,
     LADDER_R04_TH, 0, 3},
    {5, "wmma", "FP16 tensor cores through WMMA 16x16x16 fragments (TED-Join's way)",
     "kernels/ladder/r05_wmma.cu", TC_FP16, "fp16", NULL, 0, 80,
     LADDER_R05_BM, LADDER_R05_BN, LADDER_R05_BK, LADDER_R05_WM, LADDER_R05_WN, 0, 0, 1,
     LADDER_R05_TH, 0, 4},
    {6, "mma-ldmatrix", "PTX mma.sync m16n8k16 with ldmatrix; the epilogue reads d2 from the "
     "accumulator registers",
     "kernels/ladder/r06_mma_ldmatrix.cu", TC_FP16, "fp16", NULL, 0, 80,
     LADDER_R06_BM, LADDER_R06_BN, LADDER_R06_BK, LADDER_R06_WM, LADDER_R06_WN, 0, 0, 1,
     LADDER_R06_TH, 0, 5},
    {7, "swizzle", "16-byte chunks XOR-swizzled by row: ldmatrix without bank conflicts",
     "kernels/ladder/r07_swizzle.cu", TC_FP16, "fp16", NULL, 0, 80,
     LADDER_R07_BM, LADDER_R07_BN, LADDER_R07_BK, LADDER_R07_WM, LADDER_R07_WN, 0, 0, 1,
     LADDER_R07_TH, 0, 6},
    {8, "cp-async", "cp.async into a 3-stage shared-memory pipeline: loads overlap the MMAs",
     "kernels/ladder/r08_cp_async.cu", TC_FP16, "fp16", NULL, 0, 80,
     LADDER_R08_BM, LADDER_R08_BN, LADDER_R08_BK, LADDER_R08_WM, LADDER_R08_WN, 0, 0,
     LADDER_R08_ST, LADDER_R08_TH, 0, 7},
    {9, "fasted-tiles", "FASTED's tiles: 128x128 blocks of 64x64 warp tiles, two blocks a "
     "multiprocessor",
     "kernels/ladder/r09_fasted_tiles.cu", TC_FP16, "fp16", NULL, 0, 80,
     LADDER_R09_BM, LADDER_R09_BN, LADDER_R09_BK, LADDER_R09_WM, LADDER_R09_WN, 0, 0,
     LADDER_R09_ST, LADDER_R09_TH, LADDER_R09_MINB, 8},
    {10, "symmetric", "the symmetric half: only block tiles on or above the diagonal, each "
     "off-diagonal pair counted twice",
     "kernels/ladder/r10_symmetric.cu", TC_FP16, "fp16", NULL, 1, 80,
     LADDER_R10_BM, LADDER_R10_BN, LADDER_R10_BK, LADDER_R10_WM, LADDER_R10_WN, 0, 0,
     LADDER_R10_ST, LADDER_R10_TH, LADDER_R10_MINB, 9},
    {11, "wgmma", "Hopper: wgmma fed by TMA, a producer warpgroup and two consumers, persistent "
     "over a tile queue (FASTED's kernel)",
     "kernels/fasted_wgmma.cuh", TC_FP16, "fp16", "fasted", 1, 90,
     128, 256, 64, 64, 256, 0, 0, 4, 384, 1, 10}, /* WG_STAGES */
    {12, "wgmma-fp8", "the same kernel in FP8 E4M3: twice the tensor rate, half the bytes",
     "kernels/fasted_wgmma.cuh", "tc-fp8", "fp8", "fp8-e4m3", 1, 90,
     128, 256, 128, 64, 256, 0, 0, 4, 384, 1, 11},
    {13, "wgmma-int8", "the same kernel in INT8 with INT32 accumulation: exact integer dot "
     "products",
     "kernels/fasted_wgmma.cuh", "tc-int8", "int8", "int8", 1, 90,
     128, 256, 128, 64, 256, 0, 0, 4, 384, 1, 11},
    {0, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};
/* clang-format on */

int kern_ladder_count(void)
{
    int k = 0;
    while (kern_ladder_rungs[k].id)
        k++;
    return k;
}

const kern_ladder_rung *kern_ladder_find(int id)
{
    for (const kern_ladder_rung *r = kern_ladder_rungs; r->id; r++)
        if (r->id == id)
            return r;
    return NULL;
}

/* Each own rung's shared memory, as its file lays it out. */
size_t kern_ladder_smem(const kern_ladder_rung *r)
{
    const size_t bm = (size_t)r->bm, bn = (size_t)r->bn, bk = (size_t)r->bk;
    switch (r->engine ? 0 : r->id) {
    case 2: /* FP32 rows of bk values plus one, so a column read is conflict free */
    case 3:
        return (bm + bn) * (bk + 1) * 4;
    case 4:
        return (bm + bn) * bk * 4; /* FP32, k-major: a thread's 8 values are contiguous */
    case 5: /* FP16 slices, then a 16x16 FP32 staging tile a warp for the epilogue */
        return (bm + bn) * bk * 2 + (size_t)(r->threads / 32) * 16 * 16 * 4;
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
        return (size_t)r->stages * (bm + bn) * bk * 2; /* FP16 stages */
    default:
        return 0;
    }
}

static int ladder_bad(char *why, size_t size, int code, const kern_ladder_rung *r, const char *what)
{
    snprintf(why, size, "ladder rung %d (%s): %s", r->id, r->name, what);
    return code;
}

int kern_ladder_check(const kern_ladder_rung *r, const kern_device *dv, char *why, size_t size)
{
    char m[200];
    if (!r->engine) {
        if (r->threads < 32 || r->threads > 1024 || r->threads % 32)
            return ladder_bad(why, size, KERN_EINVAL, r,
                              "threads a block must be a multiple of 32 in [32, 1024]");
        if (r->bm <= 0 || r->bn <= 0)
            return ladder_bad(why, size, KERN_EINVAL, r, "the block tile must be positive");
        int cover; /* threads the tile needs */
        if (r->wm) {
            if (r->bm % r->wm || r->bn % r->wn) {
                snprintf(m, sizeof m, "warp tile %dx%d does not divide block tile %dx%d", r->wm,
                         r->wn, r->bm, r->bn);
                return ladder_bad(why, size, KERN_EINVAL, r, m);
            }
            if (r->wm % 16 || r->wn % 16 || r->bk % 16) {
                snprintf(m, sizeof m,
                         "warp tile %dx%d and k slice %d must be multiples of 16 (the MMA shape)",
                         r->wm, r->wn, r->bk);
                return ladder_bad(why, size, KERN_EINVAL, r, m);
            }
            cover = (r->bm / r->wm) * (r->bn / r->wn) * 32;
        } else {
            if (r->bm % r->tm || r->bn % r->tn) {
                snprintf(m, sizeof m, "thread tile %dx%d does not divide block tile %dx%d", r->tm,
                         r->tn, r->bm, r->bn);
                return ladder_bad(why, size, KERN_EINVAL, r, m);
            }
            cover = (r->bm / r->tm) * (r->bn / r->tn);
        }
        if (cover != r->threads) {
            snprintf(m, sizeof m, "the tiles need %d threads a block, the rung launches %d", cover,
                     r->threads);
            return ladder_bad(why, size, KERN_EINVAL, r, m);
        }
        if (r->bk && r->threads > 0 && r->stages < 1)
            return ladder_bad(why, size, KERN_EINVAL, r, "at least one shared-memory stage");
    }
    if (!dv)
        return 0;
    const int cc = dv->major * 10 + dv->minor;
    if (cc < r->min_cc) {
        snprintf(m, sizeof m, "needs compute capability %d.%d, %s has %d.%d", r->min_cc / 10,
                 r->min_cc % 10, dv->name, dv->major, dv->minor);
        return ladder_bad(why, size, KERN_ENODEV, r, m);
    }
    if (r->min_cc == 90 && r->engine && !kern_cc_has_wgmma(cc)) {
        snprintf(m, sizeof m, "needs the sm_90a kernels (wgmma, TMA), which %s cannot run",
                 dv->name);
        return ladder_bad(why, size, KERN_ENODEV, r, m);
    }
    const size_t smem = kern_ladder_smem(r);
    if (smem > dv->smem_per_block_optin) {
        snprintf(m, sizeof m, "%zu bytes of shared memory a block, %s allows %zu", smem, dv->name,
                 dv->smem_per_block_optin);
        return ladder_bad(why, size, KERN_EINVAL, r, m);
    }
    return 0;
}
