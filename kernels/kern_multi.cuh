/* Several GPUs of one host (docs/SCALING.md): one queue of ranges of an
 * engine's work-item list, shared by a host thread per device that runs
 * the engine's usual launch loop, and the runner that starts the threads,
 * reports progress and cancel from the calling thread, serialises the pair
 * sink and adds the devices' results. Caches kept across runs (the pair
 * buffers, FASTED's dataset and staging) are one slot per device ordinal,
 * touched only by the thread running on that device. */
#ifndef TCJ_KERN_MULTI_CUH
#define TCJ_KERN_MULTI_CUH

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "kernels.h"

/* Device ordinals a per-device cache has a slot for (`set device` takes
 * 0..255). */
#define KERN_DEV_SLOTS 256

/* Convert once, copy to every device: a device-side dataset the run's
 * first device prepared (converted, with its norms), published for the
 * other devices to copy (cudaMemcpyPeer) instead of converting it again. */
struct kern_shared_ds {
    int state = 0; /* 0 not yet, 1 ready, -1 the first device could not: each converts */
    int dev = -1;  /* the device holding it */
    const void *X = nullptr, *s = nullptr;
    size_t X_bytes = 0, s_bytes = 0;
    const void *key = nullptr; /* what the data is (the engine's cache entry), for the copier */
};

struct kern_queue {
    std::atomic<unsigned long long> next{0}; /* first item not yet handed out */
    std::atomic<unsigned long long> done{0}; /* items whose launches completed */
    std::mutex m;                            /* total and variant, once */
    unsigned long long total = 0;
    int opened = 0;
    int open_dev = -1;
    char variant[96] = "";
    int ndev = 1;
    /* A queue outside the process (kern_tiles): the list is its list
     * ext_list, and every range comes from it. */
    const kern_tiles *ext = nullptr;
    int ext_list = -1;
    /* Every device's launch loop reads this as its cancel flag: set by the
     * runner on the caller's cancel or on any device's failure. */
    volatile int stop = 0;
    /* The shared dataset (kern_queue_publish / kern_queue_shared). */
    std::mutex up_m;
    std::condition_variable up_cv;
    kern_shared_ds up;
};

/* The device of a run that prepares what the others copy: the list's
 * first (a->devices[0]; the per-device arguments keep the list). */
static inline int kern_queue_source(const kern_join_args *a)
{
    return a->devices[0];
}
/* The source publishes its prepared dataset (state 1) or that it has none
 * (state -1); every device waiting in kern_queue_shared wakes. */
void kern_queue_publish(kern_queue *q, const kern_shared_ds *ds);
/* Wait for the source: 1 with *out filled when it published a dataset, 0
 * when it could not (prepare it yourself), KERN_ECANCEL when the run
 * stops first (the source failed, or a cancel). */
int kern_queue_shared(kern_queue *q, kern_shared_ds *out);

/* The device's work list: the first device to call it sets the list's
 * length and kernel variant; a later one whose list differs (another kind
 * of GPU chose another kernel) is refused with one line. */
int kern_queue_open(kern_queue *q, int dev, unsigned long long total, const char *variant);
/* The next range [*b, *e) for a launch loop whose launches hold at most
 * most items and at least least: ranges shrink with what is left, so no
 * device is left with a long last one. 0 when the list is used up. */
int kern_queue_take(kern_queue *q, unsigned long long least, unsigned long long most,
                    unsigned long long *b, unsigned long long *e);

/* One device's run through the queue: an engine's entry for a single
 * device (a->device, a->ndevices 0) taking its ranges from q; *items gets
 * the items it took. */
typedef int (*kern_multi_fn)(const kern_join_args *a, kern_join_result *r, kern_queue *q,
                             unsigned long long *items);
/* Run one on every device of a->devices, one host thread each, and fill r
 * as kernels.h says for a run over a device list. */
int kern_multi_run(const kern_join_args *a, kern_join_result *r, kern_multi_fn one);

#endif
