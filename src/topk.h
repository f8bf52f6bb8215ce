/* A row's K smallest values as a max-heap of doubles (its largest, the
 * K-th smallest so far, at h[0]): the k-distance's top-K on the CPU
 * (src/cpu_kdist.c) and in the refinement of estimates
 * (src/cluster/kdist_refine.c). */
#ifndef TCJ_TOPK_H
#define TCJ_TOPK_H

/* Add v to a heap of n values (room for n + 1). */
static inline void topk_push(double *h, int n, double v)
{
    int i = n;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!(h[p] < v))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

/* Replace the top of a full heap of n values with v (v < h[0]). */
static inline void topk_replace_top(double *h, int n, double v)
{
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] > h[c])
            c++;
        if (!(h[c] > v))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

#endif
