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
     * (src/cli/reuse.h); NULL: run the engine. */
    const join_result *reuse_a, *reuse_b;
} cmp_spec;

/* One side of a comparison: an engine, its stored run and its accuracy
 * against the reference. The same struct serves A and B (and the engine
 * and reference of one cmp_run); the store keeps it as one
 * comparison_sides row per side and JSON writes it as one object shape
 * (cmp_side_rec_fields). */
typedef struct cmp_side {
    const char *engine;             /* static name from the engine table */
    int64_t run_id;                 /* the stored run, 0 when not stored */
    int judged;                     /* 0: this side is the reference itself, the rest is unset */
    double overlap;                 /* eq. 3, over all n points */
    uint64_t both;                  /* pairs both the engine and the reference found */
    uint64_t only_engine, only_ref; /* pairs one of them found */
    /* dist_engine - dist_ref, dist = sqrt(d2 as each engine computed it),
     * over the pairs both found: mean, population std (Welford), min, max.
     * All 0 when both == 0. */
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
    double only_engine_rel_max, only_ref_rel_max;
    uint64_t only_engine_rel[CMP_REL_BINS], only_ref_rel[CMP_REL_BINS];
} cmp_side;

typedef struct cmp_result {
    const char *engine_a, *engine_b; /* static names: the engine and the reference */
    double eps;
    /* Each engine once in COUNT mode over all rows: clean times and pair
     * counts, for the caller to store as runs. */
    join_result run_a, run_b;
    /* A judged against B (side.engine is A; run_id left for the caller). */
    cmp_side side;

    size_t blocks;       /* row blocks in the pair pass */
    size_t redone;       /* blocks halved and redone because a buffer filled */
    double seconds;      /* the whole comparison */
    double pair_seconds; /* the block-by-block pair pass */
} cmp_result;

extern const double cmp_rel_edges[CMP_REL_BINS + 1];

/* Run the comparison. Returns 0, TCJ_ECANCEL, or an engine's error code
 * with err_msg(). On error *r holds what was done so far. */
int cmp_run(const cmp_spec *s, cmp_result *r);
/* compare A B ref=R: s->a and a2 both judged against the reference s->b in
 * one pair pass (the reference's pairs made once per block): r for s->a,
 * r2 for a2 (reuse_a2 standing for its COUNT run, or NULL); both get the
 * reference's run as run_b. */
int cmp_run2(const cmp_spec *s, const engine *a2, const join_result *reuse_a2, cmp_result *r,
             cmp_result *r2);

/* The pair pass on its own, for several engines judged against one
 * reference (the precision lab): the reference's pairs of a block of rows
 * are made and sorted once, then each engine's pairs of the same rows are
 * merged against them, so k engines cost k + 1 pair runs a block, not 2k.
 * s gives the reference (b), the dataset, eps, options, the bound, cancel
 * and progress (over the whole pass); a is not used. most_pairs sizes the
 * blocks (every row at once when it is within the bound). Per block:
 *   while ((rc = cmp_pass_block(m, &r0, &r1)) == 1)
 *       for each engine k: cmp_pass_side(m, k, engine_k);
 * cmp_pass_block returns 1 with the next block's rows, 0 when every row
 * was done, or an error code (the reference's, TCJ_ECANCEL).
 * cmp_pass_side returns 0 or the engine's error code (its side is then
 * unfinished; the others go on). A side that finds more pairs than the
 * bound holds is split into smaller blocks for that engine alone.
 * cmp_pass_result fills side k of r (side, blocks, redone, pair_seconds),
 * leaving the runs and names to the caller. */
typedef struct cmp_pass cmp_pass;
cmp_pass *cmp_pass_new(const cmp_spec *s, uint64_t most_pairs, size_t nsides);
int cmp_pass_block(cmp_pass *m, size_t *r0, size_t *r1);
int cmp_pass_side(cmp_pass *m, size_t k, const engine *a);
void cmp_pass_result(const cmp_pass *m, size_t k, cmp_result *r);
/* The pass's wall time so far, and the part inside the engines' runs (the
 * rest is sorting, merging and judging one-sided pairs on the host). */
void cmp_pass_times(const cmp_pass *m, double *seconds, double *engine_seconds);
void cmp_pass_free(cmp_pass *m);

/* A side that is the reference itself: engine and run, nothing judged. */
void cmp_side_ref(cmp_side *side, const char *engine, int64_t run_id);
/* The member "accuracy" of a side's JSON object (docs/JSON.md): overlap,
 * both, only_engine, only_ref, err_mean, err_std, err_min, err_max,
 * only_engine_rel_max, only_ref_rel_max, histogram, only_engine_rel,
 * only_ref_rel; null when the side is not judged. */
struct json_w;
void cmp_side_accuracy_json(const cmp_side *sd, struct json_w *w);

#endif
