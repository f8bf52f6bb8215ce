/* FASTED's host driver as other engines build on it (kernels/exact.cu): a
 * run in pairs mode whose pair buffer is handed, after every launch and
 * before it is drained, to a refine step that may rewrite it. */
#ifndef TCJ_FASTED_RUN_CUH
#define TCJ_FASTED_RUN_CUH

#include "kern_drive.cuh"
#include "fasted_int.cuh"
#include "kernels.h"
#include "kern_multi.cuh"

struct fasted_post {
    void *ctx;
    int d2_bytes;          /* the d2 the drain hands out after refine (8: FP64) */
    double eps2_min;       /* the kernel keeps pairs with d~2 <= the least float >= this */
    size_t extra_per_pair; /* device bytes a pair the refine step needs (kern_work) */
    /* Before the first launch, after the dataset is on the device. */
    int (*setup)(void *ctx, kern_run *k);
    /* PAIRS, after a launch: s->np pairs (i, j, FP32 d~2) at k->pi, k->pj,
     * k->pd. Rewrite s (np and where the pairs to drain are). NULL: none. */
    int (*refine)(void *ctx, kern_run *k, kern_step *s);
    /* Once the kernel's parameters are set and before the work is counted:
     * change them (a kernel mode of its own, fewer column tiles). use_wg:
     * the wgmma kernel runs. NULL: none. */
    int (*params)(void *ctx, kern_run *k, struct fasted_params *p, int use_wg);
};

/* The factor the device values are the data times: kern_join_args.scale
 * (0: 1) times 2^fmt->value_log2. A power of two but for int8's scale. */
double fasted_scale(const kern_join_args *a, const kern_format *fmt);

/* kern_fasted_run, with post (NULL: none). The kernel is chosen for
 * a->mode (a post's own kernel mode is of the same kind: pairs or not). */
int fasted_run(const kern_join_args *a, kern_join_result *r, const fasted_post *post);
/* fasted_run as one device's share of a run over several: its ranges
 * from q (NULL: the whole list), *items the items it took (may be NULL). */
int fasted_run_q(const kern_join_args *a, kern_join_result *r, const fasted_post *post,
                 kern_queue *q, unsigned long long *items);

#endif
