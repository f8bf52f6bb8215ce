/* CUPTI's interface for builds without the CUDA headers (no CUPTI to
 * compile src/cupti_prof.cpp against): nothing is profiled, and `profile`
 * says why. The Makefile picks this file or cupti_prof.cpp, never both. */
#include "cupti_prof.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

static const char none_why[] = "this tcjoin was built without the CUDA headers (no CUPTI)";

const cupti_metric_def cupti_metrics[] = {{NULL, NULL, NULL, 0, 0}};

const cupti_metric_def *cupti_metric_find(const char *name)
{
    (void)name;
    return NULL;
}

static cupti_prof_result *none_out;

void cupti_prof_request(int sol, cupti_prof_result *out)
{
    (void)sol;
    memset(out, 0, sizeof *out);
    out->status = TCJ_EUNSUP;
    snprintf(out->reason, sizeof out->reason, "%s", none_why);
    none_out = out;
}

int cupti_prof_finish(void)
{
    int had = none_out != NULL;
    none_out = NULL;
    return had;
}

int cupti_prof_pending(void)
{
    return none_out != NULL;
}

int cupti_prof_launch(cupti_launch_fn fn, void *ctx)
{
    return fn(ctx);
}

int cupti_prof_available(void)
{
    return err_set(TCJ_EUNSUP, "%s", none_why);
}
