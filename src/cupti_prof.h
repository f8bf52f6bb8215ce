/* Hardware counters for ONE kernel launch through CUPTI's range profiler
 * (cupti_range_profiler.h + cupti_profiler_host.h, C++ behind this C
 * interface, src/cupti_prof.cpp). libcupti is opened with dlopen at run
 * time, so the binary starts where it is missing; then counters are N/A with
 * a reason, and the run itself still happens.
 *
 * How an engine lets its main kernel be profiled (the hook):
 *
 *     static int launch_once(void *ctx)   // one complete launch, synchronous
 *     {                                   // and idempotent: reset the pair
 *         ...zero the device counter...   // counter, launch, synchronize;
 *         ...launch the kernel...         // return 0 or nonzero on error
 *         return cudaDeviceSynchronize() != cudaSuccess;
 *     }
 *     ...
 *     rc = cupti_prof_launch(launch_once, &ctx);   // instead of launch_once(&ctx)
 *
 * cupti_prof_launch calls fn once when no profile is requested (the normal
 * case: no cost). Under `profile ENGINE` (cupti_prof_request set) the first
 * call runs fn once plainly (a warm-up that fills device-side caches, so
 * every pass does the same work), then once per counter pass inside one
 * CUPTI range (COUNT mode work is safe to repeat because fn resets what it
 * accumulates), and ends with one more plain call whose result and timings
 * the engine keeps. Later calls in the same run launch plainly. fn may be a
 * whole kern_*_run call in COUNT mode: the range then covers its kernel
 * launches, dominated by the join kernel. */
#ifndef TCJ_CUPTI_PROF_H
#define TCJ_CUPTI_PROF_H

#ifdef __cplusplus
extern "C" {
#endif

/* The metrics tcjoin asks for, with short labels for the counters panel.
 * Names are CUPTI/ncu metric names; "derived__" names are computed here. */
typedef struct cupti_metric_def {
    const char *name;
    const char *label;
    const char *unit; /* "%", "Hz", ... */
    int pct;          /* a percentage: drawn as a bar in [0, 100] */
    int sol;          /* 1: only with the Speed Of Light set */
} cupti_metric_def;

extern const cupti_metric_def cupti_metrics[]; /* terminated by a NULL name */
const cupti_metric_def *cupti_metric_find(const char *name);

#define CUPTI_PROF_MAX 32

/* The outcome of one profiled launch. */
typedef struct cupti_prof_result {
    int status;       /* 0: counters below; else TCJ_EUNSUP/TCJ_ENODEV/TCJ_EGPU */
    char reason[256]; /* why there are no counters (status != 0) */
    int n;
    char name[CUPTI_PROF_MAX][128];
    double value[CUPTI_PROF_MAX];
    int passes; /* replay passes used */
} cupti_prof_result;

/* Ask that the next cupti_prof_launch in this process be profiled; sol
 * adds ncu's Speed Of Light header set. The result is written to *out
 * (status TCJ_EUNSUP with reason "the engine did not launch a profiled
 * kernel" until a launch happens). */
void cupti_prof_request(int sol, cupti_prof_result *out);
/* Withdraw the request (after the run); returns 1 if a launch was
 * profiled (successfully or with a reason), 0 if none happened. */
int cupti_prof_finish(void);
/* 1 while a request is pending. */
int cupti_prof_pending(void);

/* The engine's hook: see the comment at the top. Returns fn's result (or
 * fn's first nonzero result during replay). */
typedef int (*cupti_launch_fn)(void *ctx);
int cupti_prof_launch(cupti_launch_fn fn, void *ctx);

/* Whether libcupti can be loaded here (0, or TCJ_EUNSUP with err_msg). */
int cupti_prof_available(void);

#ifdef __cplusplus
}
#endif

#endif
