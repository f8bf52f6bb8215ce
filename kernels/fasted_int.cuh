/* FASTED internals shared by the host driver (fasted.cu), the kernels
 * (fasted_mma.cuh, fasted_wgmma.cuh) and the format instance files
 * (fmt_*.cu): the kernel's parameter block and the work-queue records. */
#ifndef TCJ_FASTED_INT_CUH
#define TCJ_FASTED_INT_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "tile_sched.h"

/* k slice per pipeline stage in 16-bit units: 128 bytes of every row, in
 * any format (64 halves, 32 TF32 values, 128 bytes of 8-bit values). The
 * kernels address rows in these units, so one mainloop serves them all. */
#define FASTED_BK 64
#define FASTED_THREADS 128
#define FASTED_STAGES 3 /* shared-memory stages of the all-on pipeline */
#define FASTED_MAX_BINS 4096

/* Kernel modes of the k-distance passes (kernels/fasted_kdist.cu), beside
 * the KJOIN_* modes of a join: per-row minima over column chunks, per-row
 * histograms below a per-row bound, and the values of one bin per row.
 * FASTED_KD_MRNN and _MRLIST, HDBSCAN*'s masked nearest neighbour and its
 * candidates, and _MRPAIR and _MRPLIST, the least estimate between each
 * pair of components and its candidates (epi_mrnn.cuh), share their
 * parameter block. Numbered above every KJOIN_* mode:
 * fasted_wg_slot_done tells them apart by mode >= FASTED_KD_MIN. */
enum {
    FASTED_KD_MIN = 16,
    FASTED_KD_HIST = 17,
    FASTED_KD_BAND = 18,
    FASTED_KD_MRNN = 19,
    FASTED_KD_MRLIST = 20,
    FASTED_KD_MRPAIR = 21,
    FASTED_KD_MRPLIST = 22
};
#define FASTED_KD_BINS 32 /* histogram bins per row, linear in d2 up to the row's bound */

/* Control words of one launch, zeroed (valid_end set to ~0) before it. */
typedef struct fasted_ctrl {
    unsigned long long queue;     /* next work item */
    unsigned long long pos;       /* pair slots reserved (may overshoot cap) */
    unsigned long long valid_end; /* first failed reservation: pairs below it are valid */
    unsigned long long count;     /* COUNT/PAIRS: pairs found */
    unsigned full;                /* the pair buffer is full: stop taking work */
    unsigned nredo;               /* entries written to redo_out */
} fasted_ctrl;

/* Work left undone when the pair buffer filled: a tile and the warps whose
 * pairs did not fit (bit w = warp w). */
typedef struct fasted_redo {
    unsigned long long tile;
    unsigned mask, pad;
} fasted_redo;

/* The epilogues' own arguments, members of fasted_params (the kernels'
 * one parameter block, whose layout the kernels are compiled against). */

/* kernels/epi_kdist.cuh (modes FASTED_KD_*): u2, sc and bin are indexed by
 * global row and padded like the dataset; r below is row - q0. */
typedef struct fasted_kd_params {
    float *min; /* KD_MIN: r * nchunk + chunk, the chunk's least d2 */
    unsigned nchunk;
    const float *u2; /* the row's bound on its K-th d2; negative: the row is done */
    const float *sc; /* FASTED_KD_BINS / u2: bin = min(BINS-1, (int)(d2 * sc)) */
    const int *bin;  /* KD_BAND: the bin whose values the row wants, or -1 */
    unsigned *hist;  /* KD_HIST: r * FASTED_KD_BINS + bin */
    /* KD_BAND: row r writes its bin's d2 values at vals[off[r] + k], k
     * counted by fill[r]. */
    const unsigned long long *off;
    unsigned *fill;
    float *vals;
    /* KD_HIST: row r also keeps its first cap values at dvals[r * cap + k],
     * k counted (past cap too) by dfill[r], and (dcols not NULL: exact's
     * k-distance) the other row of each at dcols[r * cap + k]. */
    unsigned cap;
    unsigned *dfill;
    float *dvals;
    unsigned *dcols;
    /* KD_MRNN (kernels/epi_mrnn.cuh), by global row: the squared core
     * distance in the pass's units, the component, and the row's least
     * estimate with its column ((float bits << 32) | column, an atomic
     * minimum). */
    const float *core2;
    const unsigned *comp;
    unsigned long long *best;
    /* KD_MRLIST: the pairs (i, j) of other components whose estimate is
     * at most u2[i], appended at cand[k] (i << 32 | j) for k counted by
     * *ncand (past cand_cap too: then not all were kept). */
    unsigned long long *cand, *ncand;
    unsigned long long cand_cap;
    /* KD_MRPAIR and _MRPLIST: comp holds each row's component as an index
     * below npair; pair A < B of them keeps its least estimate at
     * pmin[A * npair + B] (float bits, an atomic minimum), and _MRPLIST
     * lists (as _MRLIST, by u2) the pairs of the pairs of components whose
     * pbound[A * npair + B] is not negative. */
    unsigned npair;
    unsigned *pmin;
    const float *pbound;
} fasted_kd_params;

/* kernels/epi_band.cuh: exact's COUNT pass (kernels/exact.cu) on a
 * kernel with exact's band (PAIRS): when bnd is set, each candidate's own
 * error bound decides it where it can, in the epilogue. delta_ij = k1 e +
 * k2 e^2 + k3 s^2 with e = bnd[i].x + bnd[j].x and s = bnd[i].y +
 * bnd[j].y, every step rounded up; d~2 <= lo - delta_ij (rounded down) is
 * in and counted into *count, not listed; d~2 > hi + delta_ij (rounded
 * up) is out; the band between is listed for FP64. */
typedef struct exact_band_params {
    const float2 *bnd;
    const float2 *cmax; /* per 256 rows (a wgmma tile's columns): the largest x and y */
    float k1, k2, k3;
    float lo, hi; /* eps^2 in the pass's units, rounded down / up */
    unsigned long long *count;
} exact_band_params;

typedef struct fasted_params {
    const uint16_t *X; /* rows of ld 16-bit units (the format's values), zero-padded */
    const float *s;    /* squared norms, FP32, formed as the format's traits say */
    int ld;            /* row length in 16-bit units, a multiple of FASTED_BK */
    unsigned n;        /* real points */
    unsigned q0, q1;   /* query rows */
    unsigned T, U;     /* block tiles down (query rows) and across (candidates) */
    int sym;           /* off-diagonal pairs in both orders; upper-triangle tiles unless c0 */
    /* A cross run (kern_join_args.c0): candidates are rows [c0, n), every
     * tile of the T x U rectangle (none on the diagonal); 0: all rows. */
    unsigned c0;
    int order; /* 1: 8x8 squares of tiles; 0: row by row */
    int mode;  /* KJOIN_* */
    float eps2;
    unsigned eps2_u; /* formats with integer distances (int8): pairs with d2 <= eps2_u */

    const fasted_redo *redo_in;
    unsigned nredo_in;
    unsigned long long t_base, t_end; /* queue tiles [t_base, t_end) after the redo items */
    fasted_redo *redo_out;
    fasted_ctrl *ctl;

    unsigned *counts; /* PERPOINT, indexed by row - q0 */
    unsigned *pi, *pj;
    float *pd;
    unsigned long long cap;
    const float *edges; /* HIST: nbins+1 */
    int nbins;
    unsigned long long *hist; /* HIST: [0] below edges[0], [b+1] bin b */

    unsigned cskip;         /* non-symmetric runs: column tile bj starts at bj*(1+cskip) tiles */
    const unsigned *rowmap; /* non-symmetric runs: row tile bi is tile rowmap[bi] (NULL: bi) */
    fasted_kd_params kd;    /* the k-distance passes' epilogue (epi_kdist.cuh) */
    exact_band_params band; /* exact's band, PAIRS (epi_band.cuh) */

    /* A listed set of tiles (tile_sched.h's ts_table: a cluster layout's
     * diagonal blocks, the tile cut's block pairs, a pass's own list),
     * work item t being tile tiles.tab[2t], tiles.tab[2t + 1] for t <
     * tiles.n; tab NULL: the whole grid. A table rather than a search:
     * one load, and no registers taken from the kernels. */
    ts_table tiles;
} fasted_params;

/* Number of work items for a tile grid. */
unsigned long long fasted_tiles_total(unsigned T, unsigned U, int sym, int order);

#endif
