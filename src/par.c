#include "par.h"

#include <pthread.h>
#include <unistd.h>

typedef struct par_job {
    void (*fn)(void *ctx, int t, size_t a, size_t b);
    void *ctx;
    int t;
    size_t a, b;
} par_job;

static void *par_main(void *p)
{
    par_job *j = p;
    j->fn(j->ctx, j->t, j->a, j->b);
    return NULL;
}

void par_for(size_t n, void (*fn)(void *ctx, int t, size_t a, size_t b), void *ctx, int *nt)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int k = n < PAR_MIN || cores < 2 ? 1 : (int)(cores < PAR_MAX_THREADS ? cores : PAR_MAX_THREADS);
    par_job job[PAR_MAX_THREADS];
    pthread_t th[PAR_MAX_THREADS];
    int started[PAR_MAX_THREADS] = {0};
    const size_t per = (n + (size_t)k - 1) / (size_t)k;
    for (int t = 0; t < k; t++) {
        const size_t a = per * (size_t)t < n ? per * (size_t)t : n;
        const size_t b = a + per < n ? a + per : n;
        job[t] = (par_job){fn, ctx, t, a, b};
        /* Thread 0's range runs here; one that cannot start runs here too. */
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, par_main, &job[t]) == 0;
    }
    par_main(&job[0]);
    for (int t = 1; t < k; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            par_main(&job[t]);
    }
    *nt = k;
}
