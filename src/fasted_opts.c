#include "fasted_opts.h"

#include <string.h>

/* Bits match FASTED_OFF_* in kernels/kernels.h. */
const fasted_switch fasted_switches[] = {
    {"order", 1u << 0, "block-tile ordering",
     "The persistent grid takes block tiles from a work queue in 8x8 squares of tiles\n"
     "(Figure 4), so blocks running at the same time share rows and columns in L2.\n"
     "Off: tiles are taken row by row; each wave streams more distinct data from DRAM."},
    {"smem-buffer", 1u << 1, "block-tile shared-memory buffering",
     "A block stages its 128x64 A and B slices in shared memory once and all 4 warps\n"
     "read them with ldmatrix. Off: each warp loads its fragments straight from\n"
     "global memory (L1/L2), re-reading the same data once per warp."},
    {"async-copy", 1u << 2, "memcpy_async (cp.async)",
     "Global-to-shared copies use cp.async, which bypasses registers and lets the\n"
     "copy run while the warp computes. Off: plain loads into registers, then stores\n"
     "to shared memory; the warp waits for the loads."},
    {"pipeline", 1u << 3, "multi-stage pipeline",
     "Three shared-memory stages (the paper has two): while the tensor cores work on\n"
     "k-slice k, the copies of slices k+1 and k+2 are in flight, one barrier per slice.\n"
     "Off: one stage; load, wait, compute, repeat."},
    {"residency", 1u << 4, "SM block residency",
     "Two blocks per SM (launch bounds and shared memory sized for it) so one block's\n"
     "epilogue and barriers overlap the other's math. Off: one block per SM."},
    {"warp-tile", 1u << 5, "warp tile (register blocking)",
     "Each warp computes a 64x64 tile from 16-wide fragments held in registers, so\n"
     "every A fragment is reused 8 times and every B fragment 4 times.\n"
     "Off: 32x32 warp tiles; half the reuse, twice the shared-memory traffic per FLOP."},
    {"swizzle", 1u << 6, "swizzled shared-memory layout",
     "Shared-memory rows are XOR-swizzled (eq. 2) so the 8 rows an ldmatrix reads\n"
     "fall in different banks. Off: a plain row-major layout; 8-way bank conflicts."},
    {"align", 1u << 7, "shared-memory alignment",
     "Shared buffers start on 128-byte boundaries so each 16-byte cp.async and\n"
     "ldmatrix row is one aligned transaction. Off: buffers offset by 16 bytes."},
    {"wgmma", 1u << 8, "Hopper wgmma + TMA kernel",
     "On compute capability 9.0 with every switch on, a separate kernel runs: wgmma\n"
     "(warpgroup MMA from swizzled shared memory) fed by the TMA copy engine through an\n"
     "mbarrier pipeline, 128x256 tiles, producer and consumer warpgroups. The other\n"
     "switches act on the mma.sync kernel (the paper's design). Off: mma.sync all-on."},
    {NULL, 0, NULL, NULL},
};

const fasted_switch *fasted_switch_find(const char *name)
{
    for (const fasted_switch *s = fasted_switches; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}
