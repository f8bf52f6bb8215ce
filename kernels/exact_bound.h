/* The error bound of the exact engines (docs/ACCURACY.md derives it): for
 * a pair (x, y) of FP64 points, how far FASTED's FP16-in, FP32-accumulate
 * squared distance d~2 = s_x + s_y - 2 x.y can lie from the exact FP64 d2,
 * near eps. A pair with d~2 <= eps^2 - delta is in the join, one with
 * d~2 > eps^2 + delta is out; the pairs between (the band) are computed
 * again in FP64 with the fp64/cpu engines' arithmetic. Pure C, included by
 * kernels.h: cpu-exact and the GPU exact engine use the same function. */
#ifndef TCJ_EXACT_BOUND_H
#define TCJ_EXACT_BOUND_H

#include <math.h>
#include <stddef.h>

/* exact_bound_delta runs in the GPU refinement too. */
#ifdef __CUDACC__
#define EXACT_HD __host__ __device__
#else
#define EXACT_HD
#endif

/* The bound's coefficients for dimension d (docs/ACCURACY.md, (5)):
 * delta = 2 eps e + e^2 + safety c_acc (N_x + N_y)^2, where
 * e = c_in (|x| + |y|) + c_sub and N = |x| (1 + c_in) + 2^-25 sqrt(d).
 * The safety factor multiplies the accumulation's term alone: the input
 * term is the triangle inequality over IEEE roundings (FP16 conversion,
 * FP64 norms), rigorous as it stands; only the tensor cores' summation
 * is undocumented. */
typedef struct exact_bound {
    double c_in;  /* FP16 input rounding, relative: 2^-11 (+ 2^-23) */
    double c_sub; /* FP16 subnormal spacing, absolute, both points: 2^-24 sqrt(d) */
    double c_acc; /* FP32 accumulation of norms and products, and the final combination */
    double n_abs; /* absolute part of a rounded point's norm bound: 2^-25 sqrt(d) */
    double safety;
} exact_bound;

/* gamma_m(u) = m u / (1 - m u): the relative error bound of m roundings of
 * unit u (Higham, Accuracy and Stability of Numerical Algorithms, 3.1). */
EXACT_HD static inline double exact_gamma(double m, double u)
{
    return m * u / (1.0 - m * u);
}

static inline void exact_bound_init(exact_bound *b, size_t d)
{
    const double rd = sqrt((double)d);
    /* 2^-11, and 2^-23 more: room for the FP64 norms' and delta's own
     * roundings (some d 2^-53, relative), which the safety factor covered
     * when it multiplied the whole bound. */
    b->c_in = 0x1p-11 + 0x1p-23;
    b->c_sub = 0x1p-24 * rd;
    b->n_abs = 0x1p-25 * rd;
    /* Sums of d terms with unit 2^-23 (round toward zero, the norms; and a
     * tensor core's truncating accumulation), twice (norms and product),
     * plus the two roundings of s_x + s_y - 2 x.y: (2 gamma_d + 2^-21). */
    b->c_acc = 2.0 * exact_gamma((double)d, 0x1p-23) + 0x1p-21;
    /* Tensor cores do not document their accumulation's order or rounding
     * (measured: truncation, blocks of products aligned to the largest):
     * twice c_acc's term; docs/ACCURACY.md says why. */
    b->safety = 2.0;
}
/* The same for the GPU pass that promotes (kernels/exact_kern.cuh,
 * docs/ACCURACY.md (2')): the product's FP32 sum is formed in chunks of
 * `chunk` values, each summed from zero with unit 2^-23 and added into
 * FP32 with round to nearest (at most d/chunk + 2 adds, padding
 * included), and each squared norm is summed in FP64 and rounded once to
 * FP32. So |error| <= 2^-23 (N_x^2 + N_y^2) for the norms (generously),
 * 2 g N_x N_y for the product, g = gamma_chunk + gamma'_m (1 + gamma_chunk),
 * and two roundings of the combination (2^-24 each of at most
 * (N_x + N_y)^2); with N_x^2 + N_y^2 <= (N_x + N_y)^2 and
 * 2 N_x N_y <= (N_x + N_y)^2 / 2: c_acc = g / 2 + 2^-21. */
static inline void exact_bound_init_promoted(exact_bound *b, size_t d, size_t chunk)
{
    exact_bound_init(b, d);
    const double gc = exact_gamma((double)chunk, 0x1p-23);
    const double gm = exact_gamma((double)(d / chunk + 2), 0x1p-24);
    b->c_acc = 0.5 * (gc + gm * (1.0 + gc)) + 0x1p-21;
}
/* delta for a pair whose FP64 norms are nx, ny, at threshold eps (not
 * squared). */
EXACT_HD static inline double exact_bound_delta(const exact_bound *b, double nx, double ny,
                                                double eps)
{
    const double e = b->c_in * (nx + ny) + b->c_sub;
    const double s = (nx + ny) * (1.0 + b->c_in) + 2.0 * b->n_abs;
    return 2.0 * eps * e + e * e + b->safety * b->c_acc * s * s;
}

/* How far a row's estimates must reach to hold its K nearest rows in
 * FP64 (exact's k-distance, kernels/fasted_kdist_exact.cu). E: the K-th
 * smallest estimate d~2 of row x over the other rows, in the pass's units
 * (centred, scaled); nx its norm, ny the largest. Every pair has
 * d~2 >= d^2 - 2 d e - e^2 - a (exact_bound_delta's terms, d the real
 * distance), so the K rows with d~2 <= E lie within
 * T = e + sqrt(E + 2 e^2 + a) and fp64's K-th squared distance F_K is at
 * most T^2 up to fp64's own rounding; a row y with fp64 d2 <= F_K then has
 * d~2 <= T'^2 + delta(T'), T' = T (1 + 2^-30). The factors 1 + 2^-30 hold
 * fp64's relative error (gamma_{d+2}(2^-53): d below 2^20) and this
 * function's roundings. Returns T'^2 + delta(T'), a little above: every
 * row whose d~2 is at most it, and fp64 decides among them. */
/* T' above: every row whose estimate d~2 from x (norm nx, ny the largest)
 * is at most E lies within this real distance of x (pass units). */
EXACT_HD static inline double exact_bound_within(const exact_bound *b, double nx, double ny,
                                                 double E)
{
    const double e = b->c_in * (nx + ny) + b->c_sub;     /* exact_bound_delta's e */
    const double ea = exact_bound_delta(b, nx, ny, 0.0); /* e^2 + a */
    return (e + sqrt(E + e * e + ea)) * (1.0 + 0x1p-30);
}
EXACT_HD static inline double exact_bound_reach(const exact_bound *b, double nx, double ny,
                                                double E)
{
    const double t = exact_bound_within(b, nx, ny, E);
    return (t * t + exact_bound_delta(b, nx, ny, t)) * (1.0 + 0x1p-30);
}

/* delta with the pair's measured input rounding (the GPU exact engine):
 * rx = ||x^ - v_x||, ry the same, where v is the point as converted
 * (centred and scaled in FP64) and x^ its FP16 values on the device, each
 * rounded up. Then |d^ - d_v| <= rx + ry exactly (the triangle
 * inequality), in place of (1)'s worst case c_in (|x| + |y|) + c_sub, and
 * ||x^|| <= |x| + rx. 2^-52 (|x| + |y|) adds the FP64 centring's rounding
 * (2^-53 of each |v_k|), which (1)'s c_in covered before. */
EXACT_HD static inline double exact_bound_delta_rho(const exact_bound *b, double nx, double ny,
                                                    double rx, double ry, double eps)
{
    const double e = rx + ry + 0x1p-52 * (nx + ny);
    const double s = nx + ny + rx + ry;
    return 2.0 * eps * e + e * e + b->safety * b->c_acc * s * s;
}

/* The screen before the FP64 refinement (kernels/exact_refine.cuh,
 * docs/ACCURACY.md, "How exact decides a pair"): s, the pair's squared distance summed
 * from its differences in a format of unit u whose smallest subnormal is
 * tiny (FP32 for f32, f16 and u8 rows, FP64 for FP64 rows), in any order
 * and grouping in which every term v_k^2 passes through at most h
 * roundings, the rounding of its difference v_k = a_k - b_k counted twice
 * (v_k^2 = t_k (1 + alpha)^2). With t_k = (a_k - b_k)^2 exactly and
 * S = sum t_k, s = sum t_k (1 + theta_k) + eta, |theta_k| <= gamma_h(u),
 * |eta| <= d tiny (a product or FMA that underflows is off by at most
 * tiny / 2; a sum or difference that underflows is exact), so
 * (s - eta) / (1 + gamma_h) <= S <= (s + eta) / (1 - gamma_h). fp64's own
 * d2 (each difference, square and running sum rounded, d + 2 roundings of
 * unit 2^-53 per term, and at most d tiny_64 from underflow) lies within
 * gamma_{d+2}(2^-53) S + d 2^-1074 of S. Both together: fp64's d2 lies in
 * [*lo, *hi]; the last step widens for this function's own few roundings.
 * An s that is not finite decides nothing (the caller checks).
 * exact_screen_range_r: s summed from rows other than the data's (FP64
 * rows screened from their FP32 copies), r at least the two rows'
 * distances from the data's together (||x' - x|| + ||y' - y||). */
EXACT_HD static inline void exact_screen_range_r(double s, double u, double h, double tiny,
                                                 size_t d, double r, double *lo, double *hi)
{
    if (!(h * u < 0.5 && ((double)d + 2.0) * 0x1p-53 < 0.5)) { /* gamma undefined: no range */
        *lo = -INFINITY;
        *hi = INFINITY;
        return;
    }
    const double g = exact_gamma(h, u), g64 = exact_gamma((double)d + 2.0, 0x1p-53);
    const double eta = (double)d * tiny, eta64 = (double)d * 0x1p-1074;
    double sh = (s + eta) / (1.0 - g), sl = (s - eta) / (1.0 + g);
    if (r > 0) {
        /* The sum is of rows within r (together) of the data's: the
         * data's distance lies within r of the summed rows' (the
         * triangle inequality). Each step is pushed outward by 2^-50, far
         * more than its own rounding, so the cancellation in sqrt(sl) - r
         * cannot take the lower end above the truth. */
        double a = sqrt(fmax(sl * (1.0 - 0x1p-50), 0.0)) * (1.0 - 0x1p-50) - r * (1.0 + 0x1p-50);
        a = a > 0 ? a : 0;
        sl = a * a * (1.0 - 0x1p-50);
        const double b = sqrt(sh * (1.0 + 0x1p-50)) * (1.0 + 0x1p-50) + r * (1.0 + 0x1p-50);
        sh = b * b * (1.0 + 0x1p-50);
    }
    const double up = sh * (1.0 + g64) + eta64;
    const double dn = sl * (1.0 - g64) - eta64;
    *hi = up + fabs(up) * 0x1p-48 + 0x1p-1060;
    *lo = dn - fabs(dn) * 0x1p-48 - 0x1p-1060;
}
EXACT_HD static inline void exact_screen_range(double s, double u, double h, double tiny, size_t d,
                                               double *lo, double *hi)
{
    exact_screen_range_r(s, u, h, tiny, d, 0.0, lo, hi);
}

/* The screen's shape for rows of d values of elem bytes each: V values a
 * load (16 bytes when every row starts 16-byte aligned, else one), L lanes
 * a pair (a power of two, at most 32, no more than the row's loads), and
 * h, the roundings a term passes through at most: a lane adds its terms
 * with one FMA each (at most ceil(d / V / L) V of them), the lanes' sums
 * meet in log2 L adds, and the difference's rounding counts twice (it is
 * squared). kernels/exact_refine.cuh sums in exactly this shape. */
static inline void exact_screen_shape(size_t d, size_t elem, int *V, int *L, double *h)
{
    const int v = (d * elem) % 16 == 0 ? (int)(16 / elem) : 1;
    const size_t nv = d / (size_t)v;
    int l = 1, lg = 0;
    while (l < 32 && (size_t)l < nv) {
        l *= 2;
        lg++;
    }
    *V = v;
    *L = l;
    *h = (double)((nv + (size_t)l - 1) / (size_t)l) * v + lg + 2;
}

/* The largest |v| FP16 holds without overflow: values at or beyond 65520
 * round to Inf. */
#define EXACT_FP16_MAX 65504.0

#endif
