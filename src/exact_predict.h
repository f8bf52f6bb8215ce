/* What the exact engines' error bound (kernels/exact_bound.h) predicts for
 * the current dataset and eps, before anything runs (`info`): the largest
 * squared-distance error FP16 inputs with FP32 accumulation can make near
 * eps, relative to eps^2, with and without centring, and the share of the
 * result an exact run would refine (the band), estimated on a sample of
 * pairs. Library code: nothing here prints. */
#ifndef TCJ_EXACT_PREDICT_H
#define TCJ_EXACT_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "engine.h" /* engine_kjoin_fn */

typedef struct exact_prediction {
    double err_raw;       /* delta(eps) at the largest norm / eps^2, uncentred */
    double err_centred;   /* the same after subtracting the column means */
    int auto_centres;     /* `set center auto` would centre this dataset at eps */
    size_t rows, cols;    /* the sample: query rows x candidate rows */
    uint64_t in, band;    /* sampled pairs with d2 <= eps^2; with |d2 - eps^2| <= delta_ij */
    double band_fraction; /* band / in (0 when in is 0), with auto's choice of centring */
} exact_prediction;

/* Sample at most max_rows query rows and max_cols candidate rows, evenly
 * spaced (all of them when n is at most the limit), d2 in FP64 by the
 * direct (a-b)^2 form, delta_ij as the GPU exact pass takes it
 * (center_exact_bound; exact_bound_delta_rho): each pair's own norms and
 * each row's measured FP16 rounding, centred when auto centres (the
 * choice center_pick_exact makes at eps), at the power-of-two scale the
 * engine runs at. err_raw and err_centred take the same bound at the
 * largest norm with the worst-case input rounding. */
void exact_predict(const dataset *ds, double eps, size_t max_rows, size_t max_cols,
                   exact_prediction *p);
/* exact_predict, or the last one when it was for the same values (content
 * hash, n, d), eps and sample size: 1 when it was kept, 0 when drawn now. */
int exact_predict_cached(const dataset *ds, double eps, size_t max_rows, size_t max_cols,
                         exact_prediction *p);

/* ---- exact's path (`set exact-path`, src/exact_path.h) ----
 * Where FP16's error leaves a large band, refining it pair by pair costs
 * more than joining in FP64 outright. auto takes the FP64 grid join
 * (kernels/fp64_grid.cu) when d <= EXACT_GRID_MAX_D and the band
 * predicted on a sample of EXACT_PATH_ROWS x EXACT_PATH_COLS pairs (the
 * sample `info` shows; a few ms of host time) is above EXACT_GRID_BAND of
 * the result. Why d <= 4: the 3^d cells around a point hold some 16 times
 * its eps-ball at d = 4 and 3^6 = 729 cells beyond; why 2%: above it the
 * band's refinement alone costs the pass more than the grid's whole join
 * (measured: docs/ACCURACY.md, "The FP64 grid path"). */
#define EXACT_GRID_MAX_D 4
#define EXACT_GRID_BAND 0.02
/* Why the grid where pairs within eps are sparse, whatever the band: the
 * pass examines every pair (n^2), the grid about 3^d / V_d times the
 * pairs within eps (some 16 at d = 4), each costing it about ten of the
 * pass's: below 1/160 of the pairs within eps the grid does less work,
 * and 1/256 leaves a margin. The band alone is a count of a few pairs
 * there (34 within eps in the 64 x 20000 sample of 3.7e7 uniform points
 * at S = 64), too few to decide by. */
#define EXACT_GRID_SPARSE (1.0 / 256)
#define EXACT_PATH_ROWS 64
#define EXACT_PATH_COLS 20000

/* Whether auto (setting EXACT_PATH_AUTO) predicts at d at all: only where
 * the grid could be chosen. */
int exact_path_needs_prediction(int setting, size_t d);
/* 1: the grid join, 0: the FP16 pass (whole, or cut by clusters when so
 * set). A forced setting wins; auto: the grid when d <= EXACT_GRID_MAX_D
 * and the prediction p (NULL: none, the pass) has a band_fraction above
 * EXACT_GRID_BAND or fewer than EXACT_GRID_SPARSE of its sampled pairs
 * within eps. */
int exact_path_choose(int setting, size_t d, const exact_prediction *p);
/* 1 when exact joins ds at eps over the FP64 grid (o->exact_path, and in
 * auto the band predicted from a sample: *band, -1 when none was needed;
 * band may be NULL). src/engine_exact.c. */
struct engine_opts;
int exact_grid_path(const dataset *ds, double eps, const struct engine_opts *o, double *band);
/* The power of two exact's FP16 pass scales the data by (0: none): FP16's
 * range after centring, never up (src/engine_exact.c). */
double exact_pass_scale(const dataset *ds, const struct engine_opts *o, double eps);
/* The entry exact's FP16 pass runs through: the pass whole
 * (kern_exact_run) where `set exact-path pass` says so, else over the
 * cluster cut, forced or where auto finds it pays (kern_cluster_run). */
engine_kjoin_fn exact_pass_fn(const struct engine_opts *o);
/* The grid path as a row engine_gpu_run_fmt and engine_gpu_consume_fn run:
 * kern_fp64_grid_run on the rows as loaded (no format, no centring, no
 * scale), the records under exact's name and label (src/engine_exact.c). */
struct engine;
const struct engine *exact_grid_engine(void);

#endif
