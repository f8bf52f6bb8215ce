/* Exact k-distances from estimates, through an engine's own pair set
 * (src/cluster/kdist_refine.c): the k-distance of an engine that has a
 * join but no k-distance pass of its own in its arithmetic (exact off its
 * FP64 grid, whose estimates come from its FP16 pass), run by kdist_run
 * when the engine's kdist entry returns ENGINE_ESTIMATE. Library code:
 * nothing here prints. */
#ifndef TCJ_KDIST_REFINE_H
#define TCJ_KDIST_REFINE_H

#include "engine.h"

/* Values a block's top-K lists hold at most (block rows x K). */
#define KDIST_REFINE_BLOCK_VALUES ((size_t)1 << 22)
/* Tests only: blocks of at most rows rows (0: KDIST_REFINE_BLOCK_VALUES / K). */
void kdist_refine_block_rows_for_tests(size_t rows);
/* Tests only: the query rows sorted by estimate from this many rows on (0:
 * the default, 4096). */
void kdist_refine_sort_min_for_tests(size_t rows);

/* For the query rows [s->q0, s->q1) that s->known does not flag (the
 * flagged ones hold their exact values already) (from 4096 of them, with estimates:
 * in ascending order of estimate, through a copy of the dataset in that
 * order, so that a block's rows have like radii), in blocks of
 * consecutive rows: a
 * PAIRS join of s->engine (engine_run, so its arithmetic and its pair set)
 * at the block's largest estimate, keeping each row's K smallest d2 of
 * rows other than itself; a row with fewer than K such pairs within that
 * radius is not yet known, and the rows of the block still unknown are
 * joined again at four times the squared radius (from the first positive
 * estimate, or the data's bounding box where every estimate is 0). A row
 * with K pairs within r has its K-th nearest among them (every other row
 * is farther than r), so any estimates give the engine's exact
 * k-distances; good ones give one join a block. est[q - q0]: estimated
 * squared k-distances (NULL, negative or not finite: none). Memory: K
 * values a row of a block, never the pairs. s->out, cancel and progress
 * as in kdist_spec; res gets the joins' timings and metrics "refine_joins"
 * (joins run), "refine_rounds" (radii tried, summed over the blocks) and
 * "refine_pairs" (pairs streamed). */
int kdist_refine(const kdist_spec *s, const double *est, join_result *res);

#endif
