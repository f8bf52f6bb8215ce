/* info: facts about the current dataset, against FP16's range. */
#include <inttypes.h>
#include <stdio.h>

#include "cmd.h"
#include "dataset.h"
#include "err.h"
#include "out.h"

static int info_run(session *s, int argc, char **argv)
{
    if (!s->have_ds)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    const dataset *ds = &s->ds;
    dataset_info in;
    dataset_info_compute(ds, &in);
    size_t nv = ds->n * ds->d;
    char hash[24];
    snprintf(hash, sizeof hash, "%016" PRIx64, ds->hash);

    out_printf("dataset     %s (%s)\n", ds->name, ds->format);
    if (ds->path)
        out_printf("path        %s\n", ds->path);
    out_printf("points      n=%zu d=%zu (%zu values)\n", ds->n, ds->d, nv);
    out_printf("range       [%.9g, %.9g], largest |v| %.9g\n", in.min, in.max, in.absmax);
    out_printf("max |p|^2   %.9g\n", in.max_norm2);
    out_printf("fp16        %zu overflow (|v| > 65504), %zu underflow (|v| < 2^-24), "
               "%zu subnormal\n",
               in.fp16_overflow, in.fp16_underflow, in.fp16_subnormal);
    if (in.fp16_overflow || in.fp16_underflow)
        out_printf("            FP16 engines (fasted, cpu-fp16) will lose these values; "
                   "scale the data first\n");
    else if (in.max_norm2 > 65504.0)
        out_printf("            squared norms exceed FP16's range but FP32 accumulation "
                   "holds them\n");
    else
        out_printf("            every value fits FP16's range\n");
    out_printf("duplicates  %zu points equal an earlier point\n", in.duplicates);
    out_printf("hash        %s\n", hash);

    out_rec *r = out_rec_begin("info");
    out_rec_str(r, "dataset", ds->name);
    out_rec_str(r, "dataset_format", ds->format);
    out_rec_str(r, "dataset_path", ds->path);
    out_rec_int(r, "n", (int64_t)ds->n);
    out_rec_int(r, "d", (int64_t)ds->d);
    out_rec_dbl(r, "min", in.min);
    out_rec_dbl(r, "max", in.max);
    out_rec_dbl(r, "absmax", in.absmax);
    out_rec_dbl(r, "max_norm2", in.max_norm2);
    out_rec_int(r, "fp16_overflow", (int64_t)in.fp16_overflow);
    out_rec_int(r, "fp16_underflow", (int64_t)in.fp16_underflow);
    out_rec_int(r, "fp16_subnormal", (int64_t)in.fp16_subnormal);
    out_rec_int(r, "duplicates", (int64_t)in.duplicates);
    out_rec_str(r, "dataset_hash", hash);
    out_rec_end(r);
    return 0;
}

const cmd cmd_info = {
    .name = "info",
    .usage = "info",
    .summary = "describe the current dataset",
    .help = "Show n, d, the value range, how the values fit FP16 (values beyond 65504\n"
            "overflow to Inf, nonzero values below 2^-24 flush to zero, those below 2^-14\n"
            "are subnormal), the largest squared norm, duplicate points and the content hash.",
    .min_args = 0,
    .max_args = 0,
    .options = NULL,
    .run = info_run,
};
