/* DBSCAN's curve: one point's first-round list from its K nearest
 * (src/cluster/curve_knn.h has why), the one definition the host's route
 * (src/cluster/curve_knn.c) and the device's (kernels/kern_curve_core.cu) share,
 * so both give the same lists bit for bit. C and CUDA alike. */
#ifndef TCJ_KNN_LISTS_H
#define TCJ_KNN_LISTS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

#ifdef __CUDACC__
#define KNN_HD __host__ __device__
#else
#define KNN_HD
#endif

/* Point p's K nearest (d ascending by (d2, row), rows r; past its count
 * +inf and KERN_ROW_PAD), the core distances core2 (+inf above max2):
 * *l gets p's edges w = max(c_p, c_j, d2) <= max2 strictly lighter than
 * D_p (the K-th d2: an edge beyond the K nearest may weigh D_p itself),
 * the CURVE_LIST lightest as a max-heap by (w, a, b) (descending,
 * e[0] the heaviest), as the host sink's lists are; *reach p's
 * reachability min(c_p, min_j max(c_j, d2)); *kb D_p, +inf where p has
 * fewer than K or is core at no eps within max. */
static inline KNN_HD void knn_point_list(uint32_t p, const double *d, const uint32_t *r, size_t K,
                                         const double *core2, double max2, curve_list *l,
                                         double *reach, double *kb)
{
    const double cp = core2[p];
    const double D = cp <= max2 ? d[K - 1] : INFINITY;
    double rp = cp;
    curve_edge e[CURVE_LIST];
    uint32_t m = 0;
    for (size_t u = 0; u < K && r[u] != KERN_ROW_PAD; u++) {
        const uint32_t j = r[u];
        const double cj = core2[j];
        const double v = cj > d[u] ? cj : d[u];
        if (v < rp)
            rp = v;
        const double w = cp > v ? cp : v;
        if (!(w <= max2) || !(w < D))
            continue;
        curve_edge f;
        f.w = w;
        f.a = p < j ? p : j;
        f.b = p < j ? j : p;
        if (m == CURVE_LIST && !curve_edge_before(&f, &e[m - 1]))
            continue;
        uint32_t t = m < CURVE_LIST ? m++ : m - 1;
        while (t > 0 && curve_edge_before(&f, &e[t - 1])) {
            e[t] = e[t - 1];
            t--;
        }
        e[t] = f;
    }
    for (uint32_t u = 0; u < m; u++)
        l->e[u] = e[m - 1 - u];
    l->len = m;
    *reach = rp;
    *kb = D;
}

#endif
