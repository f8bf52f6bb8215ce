#include "fasted_opts.h"

#include <pthread.h>
#include <string.h>

#include "kernels.h"

/* The explanation of each switch, keyed by its bit; the switch table itself
 * (bit, name) is kernels/'s kern_fasted_switches. */
static const struct {
    unsigned bit;
    const char *title, *explain;
} fasted_texts[] = {
    {FASTED_OFF_ORDER, "block-tile ordering",
     "The persistent grid takes block tiles from a work queue in 8x8 squares of tiles\n"
     "(Figure 4), so blocks running at the same time share rows and columns in L2.\n"
     "Off: tiles are taken row by row; each wave streams more distinct data from DRAM."},
    {FASTED_OFF_SMEM_BUFFER, "block-tile shared-memory buffering",
     "A block stages its 128x64 A and B slices in shared memory once and all 4 warps\n"
     "read them with ldmatrix. Off: each warp loads its fragments straight from\n"
     "global memory (L1/L2), re-reading the same data once per warp."},
    {FASTED_OFF_ASYNC_COPY, "memcpy_async (cp.async)",
     "Global-to-shared copies use cp.async, which bypasses registers and lets the\n"
     "copy run while the warp computes. Off: plain loads into registers, then stores\n"
     "to shared memory; the warp waits for the loads."},
    {FASTED_OFF_PIPELINE, "multi-stage pipeline",
     "Three shared-memory stages (the paper has two): while the tensor cores work on\n"
     "k-slice k, the copies of slices k+1 and k+2 are in flight, one barrier per slice.\n"
     "Off: one stage; load, wait, compute, repeat."},
    {FASTED_OFF_RESIDENCY, "SM block residency",
     "Two blocks per SM (launch bounds and shared memory sized for it) so one block's\n"
     "epilogue and barriers overlap the other's math. Off: one block per SM."},
    {FASTED_OFF_WARP_TILE, "warp tile (register blocking)",
     "Each warp computes a 64x64 tile from 16-wide fragments held in registers, so\n"
     "every A fragment is reused 8 times and every B fragment 4 times.\n"
     "Off: 32x32 warp tiles; half the reuse, twice the shared-memory traffic per FLOP."},
    {FASTED_OFF_SWIZZLE, "swizzled shared-memory layout",
     "Shared-memory rows are XOR-swizzled (eq. 2) so the 8 rows an ldmatrix reads\n"
     "fall in different banks. Off: a plain row-major layout; 8-way bank conflicts."},
    {FASTED_OFF_ALIGN, "shared-memory alignment",
     "Shared buffers start on 128-byte boundaries so each 16-byte cp.async and\n"
     "ldmatrix row is one aligned transaction. Off: buffers offset by 16 bytes."},
    {FASTED_OFF_WGMMA, "Hopper wgmma + TMA kernel",
     "On compute capability 9.0 with every switch on, a separate kernel runs: wgmma\n"
     "(warpgroup MMA from swizzled shared memory) fed by the TMA copy engine through an\n"
     "mbarrier pipeline, 128x256 tiles, producer and consumer warpgroups. The other\n"
     "switches act on the mma.sync kernel (the paper's design). Off: mma.sync all-on."},
};

static fasted_switch fasted_table[sizeof fasted_texts / sizeof fasted_texts[0] + 1];
static pthread_once_t fasted_table_once = PTHREAD_ONCE_INIT;

static void fasted_table_init(void)
{
    size_t k = 0;
    for (const kern_switch *w = kern_fasted_switches; w->name; w++) {
        fasted_switch *t = &fasted_table[k++];
        t->name = w->name;
        t->bit = w->bit;
        t->title = t->explain = "";
        for (size_t x = 0; x < sizeof fasted_texts / sizeof fasted_texts[0]; x++)
            if (fasted_texts[x].bit == w->bit) {
                t->title = fasted_texts[x].title;
                t->explain = fasted_texts[x].explain;
            }
    }
}

const fasted_switch *fasted_switch_table(void)
{
    pthread_once(&fasted_table_once, fasted_table_init);
    return fasted_table;
}

const fasted_switch *fasted_switch_find(const char *name)
{
    for (const fasted_switch *s = fasted_switches; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}
