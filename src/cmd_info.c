/* info: facts about the current dataset, against FP16's range. */
#include <inttypes.h>
#include <stdio.h>

#include "cmd.h"
#include "dataset.h"
#include "err.h"
#include "exact_predict.h"
#include "out.h"

/* The band estimate's sample: query rows x candidate rows (a fraction of a
 * second at d = 128). */
#define INFO_SAMPLE_ROWS 64
#define INFO_SAMPLE_COLS 20000

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
    exact_prediction ep;
    if (s->have_eps) {
        exact_predict(ds, s->eps, INFO_SAMPLE_ROWS, INFO_SAMPLE_COLS, &ep);
        out_printf("bound       at eps %.9g, FP16 inputs with FP32 accumulation err by up to "
                   "%.3g eps^2 in d^2 (%.3g centred; set center auto %s)\n",
                   s->eps, ep.err_raw, ep.err_centred,
                   ep.auto_centres ? "centres this data" : "leaves it as loaded");
        out_printf("exact band  about %.3g%% of the result lies in the bound's band (sample of "
                   "%zu x %zu pairs: %" PRIu64 " within eps, %" PRIu64 " in the band)\n",
                   100 * ep.band_fraction, ep.rows, ep.cols, ep.in, ep.band);
    }

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
    if (s->have_eps) {
        out_rec_dbl(r, "eps", s->eps);
        out_rec_dbl(r, "fp16_err_rel", ep.err_raw);
        out_rec_dbl(r, "fp16_err_rel_centred", ep.err_centred);
        out_rec_int(r, "center_auto", ep.auto_centres);
        out_rec_dbl(r, "band_fraction", ep.band_fraction);
        out_rec_int(r, "band_sample_pairs", (int64_t)(ep.rows * ep.cols));
    }
    out_rec_end(r);
    return 0;
}

const cmd cmd_info = {
    .name = "info",
    .usage = "info",
    .summary = "describe the current dataset",
    .help = "Show n, d, the value range, how the values fit FP16 (values beyond 65504\n"
            "overflow to Inf, nonzero values below 2^-24 flush to zero, those below 2^-14\n"
            "are subnormal), the largest squared norm, duplicate points and the content hash.\n"
            "With an eps set, also what the exact engines' error bound predicts there: the\n"
            "largest error FP16 inputs with FP32 accumulation can make in d^2 near eps,\n"
            "relative to eps^2, as loaded and centred (set center), and the share of the\n"
            "result the band holds with each pair's own bound (what cpu-exact recomputes in\n"
            "FP64; the GPU exact engine still bounds at the largest norm and recomputes\n"
            "more), from 64 x 20000 sampled pairs.",
    .min_args = 0,
    .max_args = 0,
    .options = NULL,
    .run = info_run,
};
