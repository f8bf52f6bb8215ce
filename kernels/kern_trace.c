/* TCJOIN_TRACE (set): every trace line on stderr, for benchmarks
 * (scripts/bench_cluster.sh, scripts/gpu-h43.sh). kern_trace_on is the
 * one switch that DBSCAN's, the curve's and the k-distance's step lines
 * read too. A mark is a run's host step, one line: the milliseconds since
 * the previous mark and the minor page faults in them, where a small
 * set's run spends what its kernels do not (the engine's set-up, the
 * cut's plan, each kern_run's begin, launches and end: kern_drive.cu's
 * line; the curve's steps, src/cluster/dbscan_curve.c). Off, a mark is
 * one load and a test. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "kernels.h"

static int g_kt_on = -1;
static double g_kt_last;
static long g_kt_faults; /* the process's minor page faults at the last mark */

/* Minor page faults so far: a host step's fresh pages (1.5 us each on
 * the H200 host) told apart from its work. */
static long kt_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

static double kt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int kern_trace_on(void)
{
    if (g_kt_on < 0)
        g_kt_on = getenv("TCJOIN_TRACE") != NULL;
    return g_kt_on;
}

void kern_trace_mark(const char *what)
{
    if (!kern_trace_on())
        return;
    const double now = kt_now();
    const long f = kt_faults();
    if (g_kt_last > 0)
        fprintf(stderr, "kern mark %s +%.3f ms, %ld faults\n", what, (now - g_kt_last) * 1e3,
                f - g_kt_faults);
    else
        fprintf(stderr, "kern mark %s\n", what);
    g_kt_faults = f;
    g_kt_last = kt_now();
}
