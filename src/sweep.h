/* ε toward a target selectivity, in few passes over the data.
 *
 * 1. A sample (sweep_sample_build): m query rows against c candidate rows,
 *    exact FP64 distances on the CPU, sorted. It estimates S(ε) and gives a
 *    bracket around the ε of each target.
 * 2. One engine pass in JOIN_HIST mode with bin edges over the bracket
 *    (equal-count edges from the sample plus evenly spaced ones) gives the
 *    engine's exact S at every edge.
 * 3. When no edge is within tolerance, one refining pass splits the bin
 *    holding the target into many sub-bins. A bracket that missed the target
 *    is widened, which costs a pass.
 * The search ends within tolerance, or when the count provably jumps over
 * the target at a single distance (ties: unreachable), or after max_passes.
 * Library code: nothing here prints. */
#ifndef TCJ_SWEEP_H
#define TCJ_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "engine.h"

#define SWEEP_TOL_DEFAULT 0.005
#define SWEEP_MAX_PASSES_DEFAULT 6
/* Most bins in one pass (FASTED's histogram takes at most 4096). */
#define SWEEP_MAX_BINS 4096

/* The FP64 sample: sorted non-self squared distances of m query rows to c
 * candidate rows. S(ε) is estimated as rank(ε²) / nval * (n - 1). */
typedef struct sweep_sample {
    size_t n;        /* rows of the dataset it was drawn from */
    size_t m, c;     /* sample query rows, candidate rows */
    size_t nval;     /* values in d2 (pairs, self excluded) */
    double *d2;      /* ascending; owned */
    double d2_max;   /* upper bound of every squared distance in the dataset */
    int int_grid;    /* every coordinate an integer small enough that FP16-in
                        FP32-accumulate engines compute integer d2 exactly */
    int int_grid64;  /* the same for FP64 engines */
    int ints;        /* every coordinate an integer */
    double absmax;   /* largest |coordinate| */
    double sum_max;  /* 4 d absmax^2: bounds every partial sum of any engine */
    double norm2max; /* sum over columns of the largest squared |coordinate| */
    size_t d;        /* dimension of the dataset */
    double seconds;  /* time to build */
} sweep_sample;

typedef enum sweep_status {
    SWEEP_OK,          /* S reached within tolerance */
    SWEEP_UNREACHABLE, /* the count jumps over the target at one distance */
    SWEEP_UNRESOLVED,  /* max_passes spent: closest S on both sides reported */
} sweep_status;

/* One step of a search, as stored in sweep_steps. method: "sample" (the
 * estimate, not a pass), "hist" (first pass), "refine", "widen", "count"
 * (a bisection step). eps/selectivity/pairs: the best point known after the
 * step. */
typedef struct sweep_step {
    int step;
    const char *method;
    double eps, selectivity;
    uint64_t pairs;
    double seconds;
    int pass; /* 1 when the step was a pass over the data */
} sweep_step;

typedef struct sweep_opts {
    const engine *eng;
    const engine_opts *eopt;
    double tol;         /* relative tolerance on S, default SWEEP_TOL_DEFAULT */
    int max_passes;     /* default SWEEP_MAX_PASSES_DEFAULT */
    size_t bins;        /* edges of the first pass, default 1024 */
    size_t refine_bins; /* sub-bins of a refining pass, default 2048 */
    size_t pilot_min_n; /* rows from which a pilot may narrow the first bracket
                           (src/sweep.c, "The pilot"); 0: the default, 2^22 */
    const volatile int *cancel;
    void (*progress)(void *ctx, double frac);
    void *progress_ctx;
    /* Called after every step (e.g. to store it); nonzero stops the search
     * with that code. May be NULL. */
    int (*on_step)(void *ctx, const sweep_step *st);
    void *step_ctx;
} sweep_opts;

typedef struct sweep_result {
    double target;
    sweep_status status;
    double eps;            /* chosen ε (closest achievable when not SWEEP_OK) */
    double selectivity;    /* the engine's S at eps */
    uint64_t pairs;        /* the engine's pair count at eps, self-pairs included */
    int passes;            /* engine passes over the data */
    double seconds;        /* the search, without building the sample */
    double sample_seconds; /* building the (shared) sample */
    double est_eps;        /* the sample's estimate */
    /* Closest achievable on both sides (status != SWEEP_OK): below has
     * S < target, above S > target. have_below is 0 when even the smallest
     * ε exceeds the target (duplicates). */
    int have_below, have_above;
    double below_eps, below_s, above_eps, above_s;
    int steps;
} sweep_result;

void sweep_opts_default(sweep_opts *o);

/* Checks made before anything is stored: a dataset is loaded, 0 < S < n-1,
 * not every point identical. TCJ_EINVAL with one line otherwise. */
int sweep_validate(const dataset *ds, double target);

/* Build the sample (deterministic: same data, same sample). Budget: at most
 * about max_values distances (0 = the default: 2M, or n*n/8 when that is
 * smaller, so the sample costs at most an eighth of a pass). Free with
 * sweep_sample_free. */
int sweep_sample_build(const dataset *ds, size_t max_values, sweep_sample *smp);
void sweep_sample_free(sweep_sample *smp);
/* The sample's estimate of ε for selectivity S. */
double sweep_sample_eps(const sweep_sample *smp, double target);
/* The dimension D the estimate extrapolates the sample's small distances
 * by (pairs within eps as eps^D): d for full-dimensional data, the Hill
 * estimate below it; 0 where the sample's own ranks serve (integer data,
 * duplicates among its smallest values, too few values). */
double sweep_sample_dim(const sweep_sample *smp);

/* Search ε for one target with the engine. smp may be shared by several
 * targets on the same dataset. Returns 0 (see r->status) or a TCJ_E* code
 * from the engine with err_msg. */
int sweep_solve(const dataset *ds, const sweep_sample *smp, double target, const sweep_opts *o,
                sweep_result *r);

/* The baseline: bisection on ε with a full COUNT join per step (the FASTED
 * authors' procedure), from [0, sqrt(d2_max)], until within tolerance or the
 * interval is below the engine's resolution. */
int sweep_bisect(const dataset *ds, const sweep_sample *smp, double target, const sweep_opts *o,
                 sweep_result *r);

/* The selectivity curve from ONE histogram pass: nbins+1 points with ε
 * evenly spaced over [lo, hi] (lo >= 0). eps[] and sel[] get nbins+1 values
 * and pairs[] (may be NULL) the counts. cancel (may be NULL) set nonzero
 * stops the pass within a work batch: TCJ_ECANCEL. */
int sweep_curve(const dataset *ds, const engine *e, const engine_opts *eopt, double lo, double hi,
                size_t nbins, double *eps, double *sel, uint64_t *pairs, double *seconds,
                const volatile int *cancel);
/* A default range for the curve: from the sample, ε where S is about 0.01
 * to where S is about min(1000, (n-1)/2), widened a little. */
void sweep_curve_range(const sweep_sample *smp, double *lo, double *hi);

#endif
