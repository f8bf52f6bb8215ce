/* The accuracy comparer: engine A against reference B on one dataset and
 * eps. Reports the FASTED paper's overlap score (eq. 3: the mean over points
 * of |N_A ∩ N_B| / |N_A ∪ N_B|), the distance error dist_A - dist_B over
 * pairs both found (mean, std, min, max, histogram), and the pairs only one
 * side found with their FP64 distance relative to eps. It works block of
 * query rows by block of rows, each side's pairs of a block held in a
 * bounded buffer, so memory does not grow with the result set. */
#ifndef TCJ_COMPARE_H
#define TCJ_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "engine.h"

/* Default bound on one side's pairs per block (256 MiB at the peak). */
#define CMP_BLOCK_PAIRS ((size_t)1 << 22)
/* Bins of the error histogram: odd, so 0 is the centre of a bin. */
#define CMP_ERR_BINS 41
/* Bins of (d - eps)/eps for one-sided pairs; edges in cmp_rel_edges. */
#define CMP_REL_BINS 14

typedef struct cmp_spec {
    const engine *a, *b; /* A is judged against the reference B (compare A B
                          * with another ground truth runs two of these) */
    const dataset *ds;
    double eps;
    const engine_opts *opts;
    /* Most pairs one side may hold for a block of rows (0 = 2^24): a block
     * that produces more is halved and redone. A single row over the bound
     * gets a larger buffer (at most n pairs). Buffers grow on demand; each
     * pair takes 32 bytes on each side at the peak. */
    size_t block_pairs;
    const volatile int *cancel;
    void (*progress)(void *ctx, double frac); /* called from this thread */
    void *progress_ctx;
    /* Stored COUNT runs that stand for step 1's clean runs of A and B
     * (src/reuse.h); NULL: run the engine. */
    const join_result *reuse_a, *reuse_b;
} cmp_spec;

typedef struct cmp_result {
    const char *engine_a, *engine_b; /* static names from the engines */
    double eps;
    /* Each engine once in COUNT mode over all rows: clean times and pair
     * counts, for the caller to store as runs. */
    join_result run_a, run_b;

    double overlap;                /* eq. 3, over all n points */
    uint64_t both, only_a, only_b; /* pairs */
    /* dist_A - dist_B, dist = sqrt(d2 as each engine computed it), over the
     * pairs both found: mean, population std (Welford), min, max. All 0
     * when both == 0. */
    double err_mean, err_std, err_min, err_max;
    /* Histogram of that error: nbins equal bins [lo, hi) symmetric around
     * 0; the range is set from the first nonzero errors and tripled (three
     * bins merged into one) whenever a later error falls outside it. When
     * every error is 0: one bin [0, 0] holding all of them. */
    size_t nbins;
    double bin_lo[CMP_ERR_BINS], bin_hi[CMP_ERR_BINS];
    uint64_t bin_count[CMP_ERR_BINS];
    /* One-sided pairs: rel = (d - eps)/eps with d the FP64 direct-form
     * distance; the largest |rel|, and counts per cmp_rel_edges bin
     * (edges[b] <= rel < edges[b+1]). */
    double only_a_rel_max, only_b_rel_max;
    uint64_t only_a_rel[CMP_REL_BINS], only_b_rel[CMP_REL_BINS];

    size_t blocks;       /* row blocks in the pair pass */
    size_t redone;       /* blocks halved and redone because a buffer filled */
    double seconds;      /* the whole comparison */
    double pair_seconds; /* the block-by-block pair pass */
} cmp_result;

extern const double cmp_rel_edges[CMP_REL_BINS + 1];

/* Run the comparison. Returns 0, TCJ_ECANCEL, or an engine's error code
 * with err_msg(). On error *r holds what was done so far. */
int cmp_run(const cmp_spec *s, cmp_result *r);

/* Fill the comparison fields of a store record from r (ids are left for the
 * caller). The record points into r, which must outlive it. */
struct store_cmp_rec;
void cmp_store_rec(const cmp_result *r, struct store_cmp_rec *rec);
/* Add B's side to a record filled by cmp_store_rec from A's comparison:
 * rb is B judged against the same reference (rb->engine_a is B); the
 * reference is rb->engine_b. rb must outlive the record. */
void cmp_store_rec_b(const cmp_result *rb, struct store_cmp_rec *rec);

#endif
