/* Glue shared by the FP64 GPU engines (fp64, ted, ted-index): a join_spec
 * becomes a kern_f64_job, the kernel's results and timings a join_result. */
#ifndef TCJ_GPU64_H
#define TCJ_GPU64_H

#include "engine.h"
#include "kernels.h"

/* 0 when a CUDA device is there (and, with need_tc, has FP64 tensor
 * cores); else TCJ_ENODEV with err_msg. */
int gpu64_available(int need_tc);
/* Run spec through fn; prep_phase names the preparation phase ("norms",
 * "index") or is NULL. */
int gpu64_run(const join_spec *spec, join_result *res, int (*fn)(kern_f64_job *),
              const char *prep_phase);

#endif
