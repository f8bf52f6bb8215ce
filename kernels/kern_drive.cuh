/* One launch/drain loop for every GPU engine (FASTED formats, fp64, ted,
 * ted-index). An engine sets up its data, then hands kern_drive three
 * callbacks: whether work is left, how to enqueue one bounded launch, and
 * what a finished launch left (pairs in the buffer, an overflow it will
 * redo, the fraction of the work done). The loop owns what every engine
 * needs the same way: the device and its stream, the device-memory budget,
 * the pair buffers and their drain to the host callback (double-buffered:
 * launch N+1 runs while launch N's pairs are copied out and sunk), cancel
 * between launches, progress after each, and the CUDA-event kernel timing. */
#ifndef TCJ_KERN_DRIVE_CUH
#define TCJ_KERN_DRIVE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels.h"

struct kern_run {
    const kern_join_args *a;
    kern_join_result *r;
    cudaDeviceProp prop;
    int cc; /* compute capability, major*10 + minor */
    cudaStream_t st;
    cudaEvent_t e0, e1;
    /* Budget: bytes this run holds on the device (its own and cached) and
     * the most it may hold (0: no cap but the device's own). */
    size_t mem_used, mem_cap;
    /* PAIRS: the device buffer of cap entries (d2 of d2_bytes, 4 or 8)
     * the next launch writes, set by kern_drive before each launch (two
     * buffers take turns when the budget holds both: a launch's pairs are
     * copied out of one while the next launch writes the other); valid
     * from the launch through its collect. */
    uint32_t *pi, *pj;
    void *pd;
    size_t cap;
    int d2_bytes;
    /* FP32 d2 are multiplied by this when drained (a power of two: the
     * engine's scale undone exactly; 0 is taken as 1). */
    double d2_scale;
    /* TCJOIN_TRACE: where the run's host time went (kern_end prints
     * one line): kern_begin, what came before kern_drive, and over the
     * launches their enqueue, the wait for each, collect and the pairs'
     * hand-over, summed. */
    int tr_on;
    double tr_t0, tr_t, tr_begin, tr_pre, tr_enq, tr_wait, tr_coll, tr_pairs, tr_drive;
    unsigned tr_launches;
};

/* What one finished launch left. */
struct kern_step {
    unsigned long long np; /* PAIRS: valid pairs in the buffer, to drain */
    /* Where they are, when not in k's buffers (an engine that rewrote
     * them, as exact's FP64 refinement does); d2 of kern_work.d2_bytes.
     * Copied out while the next launch runs and done before its collect:
     * the engine may write them again from that collect on. */
    const uint32_t *pi, *pj;
    const void *pd;
    int overflow; /* PAIRS: the buffer overflowed; the engine redoes the rest */
    double frac;  /* fraction of the whole run's work now done */
};

struct kern_work {
    void *eng;
    /* PAIRS: the d2 size drained (4 = FP32, 8 = FP64; the buffer's d2 array
     * has room for cap values of this size) and the fewest pairs its
     * buffer may hold (what one unit of work can emit). */
    int d2_bytes;
    size_t min_cap;
    /* Device bytes a pair the engine needs besides the buffer (exact's
     * compacted copy): the buffer is sized so that these fit too. */
    size_t extra_per_pair;
    int (*more)(void *eng);                               /* 1 while work is left */
    int (*launch)(void *eng, kern_run *k);                /* enqueue one bounded launch on k->st */
    int (*collect)(void *eng, kern_run *k, kern_step *s); /* after it completed */
};

/* Zero r, check the arguments, select and describe the device
 * (r->device_name), create the stream and events, set the budget.
 * need_f64_mma: the engine needs FP64 tensor cores. On failure everything
 * is released. */
int kern_begin(kern_run *k, const kern_join_args *a, kern_join_result *r, const char *who,
               int need_f64_mma);
void kern_end(kern_run *k);

/* Device memory through the budget: KERN_ENOMEM with a message naming
 * what and how much when the cap or the device refuses (the CUDA error is
 * cleared, the run goes on if the caller shrinks). kern_free gives the
 * bytes back. kern_charge/kern_uncharge account memory held elsewhere (a
 * cache kept across runs). */
int kern_malloc(kern_run *k, void **p, size_t bytes, const char *what);
void kern_free(kern_run *k, void *p, size_t bytes);
/* The same from the device's pool (kern_pool.cuh) for a run's own state,
 * given back by kern_free_pooled (or kern_pool_free when the run is
 * over): some twenty arrays a run, whose cudaMalloc and cudaFree are a
 * fixed cost that shows on a small exact run (60,000 x 784). */
int kern_malloc_pooled(kern_run *k, void **p, size_t bytes, const char *what);
void kern_free_pooled(kern_run *k, void *p, size_t bytes);
int kern_charge(kern_run *k, size_t bytes, const char *what);
void kern_uncharge(kern_run *k, size_t bytes);
/* Pinned host memory; KERN_ENOMEM when the host refuses. */
int kern_malloc_host(void **p, size_t bytes, const char *what);

/* Run the engine's launches to the end (or cancel, or an error). */
int kern_drive(kern_run *k, const kern_work *w);

/* Wall-clock seconds (CLOCK_MONOTONIC). */
double kern_now(void);
/* Milliseconds between two recorded events. */
double kern_event_s(cudaEvent_t a, cudaEvent_t b);

/* Free the pair buffers kept across runs. */
void kern_drive_release(void);

#endif
