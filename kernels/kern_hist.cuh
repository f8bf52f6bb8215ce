/* The histogram bin of a squared distance, for every GPU engine (FASTED's
 * FP32 edges, the FP64 engines' double edges). */
#ifndef TCJ_KERN_HIST_CUH
#define TCJ_KERN_HIST_CUH

/* Slot k: the smallest k with d2 <= edges[k] (edges ascending, nbins+1 of
 * them); slot 0 counts "below edges[0]", slot b+1 bin b. The caller has
 * checked d2 <= edges[nbins]. */
template <class T> __device__ __forceinline__ int kern_hist_slot(T d2, const T *edges, int nbins)
{
    int lo = 0, hi = nbins;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (d2 <= edges[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

#endif
