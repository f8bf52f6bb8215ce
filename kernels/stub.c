/* Built instead of the .cu files when nvcc is missing: every kernel entry
 * reports that this build has no CUDA. Each GPU entry point in kernels.h
 * has a stub here. */
#include <stdio.h>
#include <string.h>

#include "kern_sort.h"
#include "kernels.h"

/* TCJ_STUB_WHY (Makefile): 0 no nvcc, 1 make CPU_ONLY=1, 2 make demo chose
 * the CPU-only build because no NVIDIA driver is loaded. The line says the
 * real reason, not "nvcc not found" where nvcc is installed. */
#ifndef TCJ_STUB_WHY
#define TCJ_STUB_WHY 0
#endif
#if TCJ_STUB_WHY == 2
static const char stub_msg[] =
    "this tcjoin is the CPU-only build that make demo chose as no NVIDIA "
    "driver was loaded; on a GPU machine, make builds the GPU code";
#elif TCJ_STUB_WHY == 1
static const char stub_msg[] = "this tcjoin is the CPU-only build (make CPU_ONLY=1); make builds "
                               "the GPU code";
#else
static const char stub_msg[] = "this tcjoin was built without CUDA (nvcc not found)";
#endif
static _Thread_local char stub_err[512];

const char *kern_error(void)
{
    return stub_err[0] ? stub_err : stub_msg;
}

int kern_fail_msg(int code, const char *msg)
{
    snprintf(stub_err, sizeof stub_err, "%s", msg);
    return code;
}

int kern_built_with_cuda(void)
{
    return 0;
}

int kern_device_count(void)
{
    return 0;
}

int kern_device_info(int dev, kern_device *out)
{
    memset(out, 0, sizeof *out);
    return KERN_ENODEV;
}

/* Every engine's kernel entry: one body. */
static int stub_join(const kern_join_args *a, kern_join_result *r)
{
    (void)a;
    memset(r, 0, sizeof *r);
    return KERN_ENODEV;
}

int kern_fp64_run(const kern_join_args *a, kern_join_result *r)
{
    return stub_join(a, r);
}

int kern_ted_run(const kern_join_args *a, kern_join_result *r)
{
    return stub_join(a, r);
}

int kern_ted_index_run(const kern_join_args *a, kern_join_result *r)
{
    return stub_join(a, r);
}

int kern_fasted_run(const kern_join_args *a, kern_join_result *r)
{
    return stub_join(a, r);
}

int kern_exact_run(const kern_join_args *a, kern_join_result *r)
{
    return stub_join(a, r);
}

int kern_fp64_grid_run(const kern_join_args *a, kern_join_result *r)
{
    return stub_join(a, r);
}

int kern_fp64_grid_dbscan(const kern_join_args *a, uint64_t minpts, uint8_t *core, int32_t *labels,
                          unsigned long long *pairs, double *core_s, kern_join_result *r)
{
    (void)minpts;
    (void)core;
    (void)labels;
    *pairs = 0;
    *core_s = 0;
    return stub_join(a, r);
}

int kern_fp64_grid_kdist(const kern_join_args *a, int k, double r0, double *out,
                         kern_join_result *r)
{
    (void)k;
    (void)r0;
    (void)out;
    return stub_join(a, r);
}

int kern_fp64_kdist_brute(const kern_join_args *a, int k, double *out, kern_join_result *r)
{
    (void)k;
    (void)out;
    return stub_join(a, r);
}

int kern_dbscan(kern_join_fn fn, const kern_join_args *a, dbscan_dev_io *io,
                kern_join_result *rcore, kern_join_result *r)
{
    (void)fn;
    (void)io;
    memset(rcore, 0, sizeof *rcore);
    return stub_join(a, r);
}

int kern_curve_core(kern_join_fn fn, const kern_join_args *a, const curve_core_io *io,
                    kern_join_result *r)
{
    (void)fn;
    (void)io;
    return stub_join(a, r);
}

int kern_sort_f64(int dev, const kern_sort_job *jobs, size_t m)
{
    (void)dev;
    (void)jobs;
    (void)m;
    return kern_fail_msg(KERN_ENODEV, stub_msg);
}

int kern_curve_round(kern_join_fn fn, const kern_join_args *a, const curve_round_io *io,
                     kern_join_result *r)
{
    (void)fn;
    (void)io;
    return stub_join(a, r);
}

int kern_curve_later_rows(size_t n, const double *core, const uint32_t *comp,
                          const curve_edge *bound, const uint32_t *part, uint32_t *rows, size_t *m,
                          size_t *mb)
{
    (void)n;
    (void)core;
    (void)comp;
    (void)bound;
    (void)part;
    (void)rows;
    *m = *mb = 0;
    return kern_fail_msg(KERN_ENODEV, stub_msg);
}

int kern_kd_bounds(const float *mins, size_t rows, unsigned nchunk, int k, int k2, float *u2,
                   float *u2w, int regs)
{
    (void)mins;
    (void)rows;
    (void)nchunk;
    (void)k;
    (void)k2;
    (void)u2;
    (void)u2w;
    (void)regs;
    return kern_fail_msg(KERN_ENODEV, stub_msg);
}

int kern_mst_round(const kern_join_args *a, mst_round_io *io, kern_join_result *r)
{
    (void)io;
    return stub_join(a, r);
}

int kern_graph_run(kern_join_fn fn, const kern_join_args *a, graph_dev_io *io, kern_join_result *r)
{
    (void)fn;
    io->kept = NULL;
    return stub_join(a, r);
}

int kern_graph_copy(struct kern_graph *g, int32_t *indices, double *dist)
{
    (void)g;
    (void)indices;
    (void)dist;
    return kern_fail_msg(KERN_ENODEV, stub_msg);
}

uint64_t kern_graph_entries(const struct kern_graph *g)
{
    (void)g;
    return 0;
}

void kern_graph_free(struct kern_graph *g)
{
    (void)g;
}

int kern_fasted_kdist(const kern_join_args *a, int k, double *out, kern_join_result *r)
{
    (void)k;
    (void)out;
    return stub_join(a, r);
}

int kern_format_probe(const kern_format *fmt, int dev, const float *x, size_t n, void *codes,
                      float *sq)
{
    (void)fmt;
    (void)dev;
    (void)x;
    (void)n;
    (void)codes;
    (void)sq;
    return KERN_ENODEV;
}

void kern_fasted_release(void) {}

int kern_fasted_cache_digest(int dev, uint64_t *digest, int *from)
{
    (void)dev;
    (void)digest;
    (void)from;
    return KERN_ENODEV;
}

int kern_device_has_f64_mma(int dev)
{
    (void)dev;
    return 0;
}

int kern_device_has_fp8_mma(int dev)
{
    (void)dev;
    return 0;
}

int kern_device_has_wgmma(int dev)
{
    (void)dev;
    return 0;
}

int kern_ladder_run(const kern_ladder_args *a, kern_ladder_result *r)
{
    (void)a;
    memset(r, 0, sizeof *r);
    return kern_fail_msg(KERN_ENODEV, stub_msg);
}

int kern_cublas_gemm(int device, const char *dtype, size_t n, size_t d, int reps, double *seconds)
{
    (void)device, (void)dtype, (void)n, (void)d, (void)reps;
    *seconds = 0;
    return kern_fail_msg(KERN_ENODEV, stub_msg);
}
