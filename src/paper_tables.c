#include "paper_tables.h"

#include <math.h>
#include <string.h>

/* Table 5 of the FASTED paper (A100, Synth, |D| = 10^5, d = 4096, all on
 * 154 TFLOPS): the figure with each optimization off. The paper turns
 * memcpy_async off only together with the pipeline, so async-copy alone has
 * no paper figure. The `why` lines compare with the H200 measurements in
 * docs/BENCHMARKS.md. */
const paper_t5_row paper_t5[] = {
    {"order", "block-tile ordering", 133.1,
     "H200's 50 MB L2 and 4.8 TB/s HBM3e absorb the extra DRAM reads of row-by-row tiles."},
    {"smem-buffer", "block tile", 95.8,
     "warps re-read fragments through L1/L2; at twice the A100's math rate the caches lag."},
    {"async-copy", "(memcpy_async alone: not in the paper)", 0,
     "the paper has no row for memcpy_async alone; compare async-copy+pipeline."},
    {"async-copy+pipeline", "memcpy_async with the pipeline", 48.6,
     "both off leaves every load exposed; the paper's worst-but-one row."},
    {"pipeline", "pipeline", 145.0,
     "the second resident block (228 KB shared memory per SM) hides one block's loads."},
    {"residency", "SM residency", 110.8,
     "at 2 warps per scheduler the kernel is latency-bound: losing the 2nd block costs more."},
    {"warp-tile", "warp tile", 38.0,
     "32x32 tiles use fewer registers, so more warps hide the latency-bound chain."},
    {"swizzle", "swizzle", 120.8,
     "8-way conflicts lengthen the latency-bound ldmatrix->HMMA chain at 1.98 GHz."},
    {"align", "alignment", 120.7,
     "a misaligned row costs an extra wavefront, small next to the latency-bound loop."},
    {NULL, NULL, 0, NULL},
};

const paper_t5_row *paper_t5_find(const char *name)
{
    for (const paper_t5_row *r = paper_t5; r->name; r++)
        if (strcmp(r->name, name) == 0)
            return r;
    return NULL;
}

double paper_t5_slowdown(const paper_t5_row *r)
{
    return r && r->tflops > 0 ? PAPER_T5_ALL_ON / r->tflops : 0;
}

const int paper_t6_d[3] = {128, 256, 4096};
const char *const paper_t6_engine[2] = {"fasted", "ted"};

/* The paper's Table 6 (Nsight Compute on an A100 40 GB PCIe, Synth
 * n = 10^5), from ../shared/reference/fasted-paper-tables.md: FASTED at
 * d = 128, 256, 4096, then TED-Join-brute; TED-Join at d = 4096 ran out of
 * shared memory (NaN, shown "oos"). The tensor pipe row is FP16-32 for
 * FASTED and FP64 for TED-Join, as the metrics measured beside it; the
 * clock is in MHz as measured (the paper's GHz x 1000). */
#define OOM NAN
const paper_t6_metric paper_t6[] = {
    {"DRAM throughput",
     "%",
     "dram__throughput.avg.pct_of_peak_sustained_elapsed",
     "dram__throughput.avg.pct_of_peak_sustained_elapsed",
     1,
     {1.98, 3.54, 16.0, 0.04, 0.04, OOM}},
    {"shared mem throughput",
     "%",
     "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed",
     "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed",
     1,
     {6.49, 10.5, 36.1, 42.3, 16.0, OOM}},
    {"smem bank conflicts",
     "%",
     "derived__smem_bank_conflicts_pct",
     "derived__smem_bank_conflicts_pct",
     1,
     {0.00, 0.00, 0.00, 92.3, 75.0, OOM}},
    {"L2 hit rate",
     "%",
     "lts__t_sector_hit_rate.pct",
     "lts__t_sector_hit_rate.pct",
     1,
     {89.8, 89.6, 84.4, 98.9, 98.9, OOM}},
    {"tensor pipe util",
     "%",
     "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
     "sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active",
     1,
     {10.1, 17.8, 64.0, 5.75, 1.99, OOM}},
    {"SM clock",
     "MHz",
     "sm__cycles_elapsed.avg.per_second",
     "sm__cycles_elapsed.avg.per_second",
     1e-6,
     {1370, 1400, 1120, 1400, 1410, OOM}},
    {NULL, NULL, NULL, NULL, 0, {OOM, OOM, OOM, OOM, OOM, OOM}},
};

const char paper_t6_note[] =
    "(paper): Table 6 of B. Curless, M. Gowanlock, \"Fast and Scalable Mixed Precision Euclidean\n"
    "Distance Calculations Using GPU Tensor Cores\", ICPP 2025: one A100 40 GB PCIe, Synth\n"
    "n = 10^5 (../shared/reference/fasted-paper-tables.md). The A100 ran d=4096 at 1.12 GHz.";
const char paper_t6_ted_smem[] =
    "oos: TED-Join at d=4096 does not fit in shared memory; the paper reports no counters\n"
    "for it. tcjoin's ted streams k-slices through shared memory and runs it.";
