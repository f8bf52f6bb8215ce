/* exact's k-distance decided on the device (kernels/fasted_kdist_exact.cu),
 * for kern_fasted_kdist's passes (kernels/fasted_kdist.cu) when
 * kern_join_args.kd_exact is set. Pass B keeps each row's values under its
 * bound with their other rows; where the bound reaches as far as the
 * error bound needs from the row's K-th estimate (exact_bound_reach), the
 * kept rows hold the row's K nearest in FP64, and the K-th smallest of
 * their FP64 d2 (fp64's direct form) is the answer. */
#ifndef TCJ_FASTED_KDIST_EXACT_CUH
#define TCJ_FASTED_KDIST_EXACT_CUH

#include <stddef.h>

#include <vector>

#include "exact_bound.h"
#include "kernels.h"

/* Status of a row after kd_exact_finish: decided in FP64; or its bound
 * falls short of the reach of its K-th estimate (the pass kept too few
 * values to decide it). */
#define KD_STATUS_EXACT 3
#define KD_STATUS_WIDER 4

/* The dataset as the host holds it, on the device, and each row's norm as
 * the passes convert it (nx on the host too, for the bounds). The rows and
 * norms are kept per device for the dataset (kd_exact_release), so a
 * warm k-distance uploads nothing; under a cap (set gpu-mem) nothing is
 * kept. */
struct kd_exact {
    void *x;
    double *center, *nx, *outd;
    unsigned long long *nmax;
    const double *hnx;
    std::vector<double> own_hnx; /* hnx's storage where the rows are not kept */
    bool kept;                   /* x, nx and hnx are the device's kept copy */
    double nm;                   /* the largest norm */
    exact_bound b;
    size_t bytes;
    /* The passes' rows in another order (kd_exact_order): pass row g is
     * the dataset's row hmap[g] (dmap on the device); NULL: the same. */
    const uint32_t *hmap;
    uint32_t *dmap;
};

/* Uploads a's rows and centre and forms the norms (sc: the passes'
 * scale); the bound is the promoting pass's (exact_bound_init_promoted)
 * when promoted, the passes running exact_kern_promoted's kernel.
 * KERN_ENOMEM (message left) where they do not fit or the type is not one
 * the device reads: the caller then keeps estimates. */
int kd_exact_open(const kern_join_args *a, double sc, size_t nq, bool promoted, kd_exact *e);
void kd_exact_close(kd_exact *e);
/* Frees every device's kept rows (kern_fasted_release). */
void kd_exact_release(void);
/* The passes run over the rows in the order map (n entries, pass row ->
 * dataset row; kept by the caller until close): the bounds and the FP64
 * read the dataset's rows through it. 0 or an error (message left). */
int kd_exact_order(kd_exact *e, const uint32_t *map, size_t n);
/* Pass B's bound for query row g (the passes' row) whose K-th estimate is at most u (pass
 * units): exact_bound_reach, rounded up to FP32 (inf stays inf). */
float kd_exact_bound(const kd_exact *e, size_t g, float u);
/* Rows of status 1 (every value under the bound u2[row] kept, the K-th
 * estimate in outv) whose bound reaches as far as their K-th estimate
 * needs, decided in FP64 from their kept values and rows: status becomes
 * KD_STATUS_EXACT and out (host, by query row) FP64's K-th smallest d2;
 * the others KD_STATUS_WIDER. */
int kd_exact_finish(const kd_exact *e, const kern_join_args *a, int K, const float *u2,
                    float *dvals, unsigned *dcols, const unsigned *dfill, unsigned cap,
                    const float *outv, int *status, size_t nq, double *out);

#endif
