/* FASTED's host driver as other engines build on it (kernels/exact.cu): a
 * run in pairs mode whose pair buffer is handed, after every launch and
 * before it is drained, to a refine step that may rewrite it. */
#ifndef TCJ_FASTED_RUN_CUH
#define TCJ_FASTED_RUN_CUH

#include "kern_drive.cuh"
#include "kernels.h"

struct fasted_post {
    void *ctx;
    int d2_bytes;          /* the d2 the drain hands out after refine (8: FP64) */
    double eps2_min;       /* the kernel keeps pairs with d~2 <= the least float >= this */
    size_t extra_per_pair; /* device bytes a pair the refine step needs (kern_work) */
    /* Before the first launch, after the dataset is on the device. */
    int (*setup)(void *ctx, kern_run *k);
    /* After a launch: s->np pairs (i, j, FP32 d~2) at k->pi, k->pj, k->pd.
     * Rewrite s (np and where the pairs to drain are). */
    int (*refine)(void *ctx, kern_run *k, kern_step *s);
};

/* kern_fasted_run, with post (NULL: none). With post, a->mode must be
 * KJOIN_PAIRS. */
int fasted_run(const kern_join_args *a, kern_join_result *r, const fasted_post *post);

#endif
