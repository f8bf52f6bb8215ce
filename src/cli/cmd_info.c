/* info: facts about the current dataset, against FP16's range. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "center.h"
#include "cmd.h"
#include "dataset.h"
#include "err.h"
#include "exact_predict.h"
#include "fmt_fit.h"
#include "lab.h"
#include "out.h"
#include "shift.h"

/* The band estimate's sample: query rows x candidate rows (a fraction of a
 * second at d = 128). */
#define INFO_SAMPLE_ROWS 64
#define INFO_SAMPLE_COLS 20000

/* What the format's engine subtracts from each column here (the row
 * precisions would run): the column minima of an unsigned format under
 * `set shift on`, else the means when `set center` centres it, or NULL
 * when it converts the values as loaded. */
static const double *info_center(session *s, const fmt_fit_format *f)
{
    if (f->is_unsigned)
        return s->eopt.shift ? shift_mins(&s->ds) : NULL;
    const char *format = f->name;
    lab_pick p;
    size_t n = 0;
    const char *names[1] = {format};
    if (lab_pick_rows(&s->eopt, names, 1, 0, &p, 1, &n) || n != 1 || !p.e->centers) {
        err_clear();
        return NULL;
    }
    return center_pick(&s->ds, s->eopt.center, p.e->exact || p.e->center_auto);
}

static int info_run(session *s, int argc, char **argv)
{
    if (!s->have_ds)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    const dataset *ds = &s->ds;
    dataset_info in;
    int rc = dataset_info_compute(ds, &in);
    if (rc)
        return rc;
    /* d-sized scratch beyond memory (the means at d = 2^28) is a line */
    for (const fmt_fit_format *f = fmt_fit_formats; f->name; f++) {
        err_clear();
        if (!info_center(s, f) && err_msg()[0])
            return TCJ_ENOMEM;
    }
    size_t nv = ds->n * ds->d;
    char hash[24];
    snprintf(hash, sizeof hash, "%016" PRIx64, ds->hash);

    out_printf("dataset     %s (%s)\n", ds->name, ds->format);
    if (ds->path)
        out_printf("path        %s\n", ds->path);
    out_printf("points      n=%zu d=%zu (%zu values)\n", ds->n, ds->d, nv);
    out_printf("kept as     %s, %zu bytes of values in memory\n", dataset_dtype(ds)->name,
               dataset_bytes(ds));
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
    /* The precision lab's formats. */
    fmt_fit fits[16];
    const fmt_fit_format *fs[16];
    size_t nf = 0;
    int centred[16];
    out_printf("formats     how the values fit each format of the precision lab, as its engine\n"
               "            here converts them (centred as `set center` says, shifted by\n"
               "            `set shift`):\n");
    for (const fmt_fit_format *f = fmt_fit_formats; f->name && nf < 16; f++) {
        if (!fmt_fit_is_range(f))
            continue;
        fs[nf] = f;
        fmt_fit *ff = &fits[nf++];
        const double *center = info_center(s, f);
        centred[nf - 1] = center != NULL;
        fmt_fit_engine(ds, center, f, ff);
        char scale[48] = "";
        snprintf(scale, sizeof scale, "%s",
                 !center          ? ""
                 : f->is_unsigned ? "shifted, "
                                  : "centred, ");
        if (f->scaled)
            snprintf(scale + strlen(scale), sizeof scale - strlen(scale), "scale 2^%d, ",
                     ff->scale);
        char neg[48] = "";
        if (f->is_unsigned)
            snprintf(neg, sizeof neg, ", %zu negative (refused)", ff->negative);
        out_printf("  %-9s %s%zu overflow, %zu underflow to 0%s\n", f->name, scale, ff->overflow,
                   ff->underflow, neg);
    }
    size_t nonint;
    double lo, hi;
    const int i8 = fmt_fit_int8(ds, &nonint, &lo, &hi);
    if (i8 != FMT_INT8_NO)
        out_printf("  int8      exact: every value an integer in %s\n",
                   i8 == FMT_INT8_U8 ? "[0, 255] (u8)" : "[-128, 127] (s8)");
    else
        out_printf("  int8      not exact: %zu values are not integers, range [%.9g, %.9g]\n",
                   nonint, lo, hi);
    exact_prediction ep;
    if (s->have_eps) {
        exact_predict_cached(ds, s->eps, INFO_SAMPLE_ROWS, INFO_SAMPLE_COLS, &ep);
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
    out_rec_str(r, "dtype", dataset_dtype(ds)->name);
    out_rec_uint(r, "bytes", dataset_bytes(ds));
    out_rec_dbl(r, "min", in.min);
    out_rec_dbl(r, "max", in.max);
    out_rec_dbl(r, "absmax", in.absmax);
    out_rec_dbl(r, "max_norm2", in.max_norm2);
    out_rec_int(r, "fp16_overflow", (int64_t)in.fp16_overflow);
    out_rec_int(r, "fp16_underflow", (int64_t)in.fp16_underflow);
    out_rec_int(r, "fp16_subnormal", (int64_t)in.fp16_subnormal);
    out_rec_int(r, "duplicates", (int64_t)in.duplicates);
    out_rec_str(r, "dataset_hash", hash);
    out_rec_obj(r, "formats");
    for (size_t k = 0; k < nf; k++) {
        const fmt_fit_format *f = fs[k];
        out_rec_obj(r, f->name);
        out_rec_int(r, f->is_unsigned ? "shifted" : "centred", centred[k]);
        if (f->scaled)
            out_rec_int(r, "scale", fits[k].scale);
        out_rec_uint(r, "overflow", fits[k].overflow);
        out_rec_uint(r, "underflow", fits[k].underflow);
        if (f->is_unsigned)
            out_rec_uint(r, "negative", fits[k].negative);
        out_rec_close(r);
    }
    out_rec_close(r);
    out_rec_str(r, "int8", i8 == FMT_INT8_U8 ? "u8" : i8 == FMT_INT8_S8 ? "s8" : "no");
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
    .help = "Show n, d, the element type the values are kept in (u8, f16, f32 or f64, as\n"
            "loaded) and their bytes, the value range, how the values fit FP16 (values\n"
            "beyond 65504 overflow to Inf, nonzero values below 2^-24 flush to zero, those\n"
            "below 2^-14 are subnormal), the largest squared norm, duplicate points and the\n"
            "content hash.\n"
            "Then, for each format of the precision lab (fp16, bf16, tf32, fp8-e4m3, fp8-e5m2,\n"
            "ue5m3, ue4m4), taken as its engine here converts them (less the column means\n"
            "where set center centres it, less the column minima for ue5m3 and ue4m4 under\n"
            "set shift on): the values beyond its largest finite value, the nonzero values\n"
            "that become 0, the negative values an unsigned format refuses and the\n"
            "power-of-two scale the FP8 formats apply (largest |v| just under the format's\n"
            "largest); and whether int8 would be exact (every value an integer in [0, 255]\n"
            "or [-128, 127]).\n"
            "With an eps set, also what the exact engines' error bound predicts there: the\n"
            "largest error FP16 inputs with FP32 accumulation can make in d^2 near eps,\n"
            "relative to eps^2, as loaded and centred (set center), and the share of the\n"
            "result in the GPU exact engine's band, what it recomputes in FP64 (each pair's\n"
            "own norms and each row's measured FP16 rounding; centred where set center auto\n"
            "centres at this eps), from 64 x 20000 sampled pairs.",
    .min_args = 0,
    .max_args = 0,
    .options = NULL,
    .run = info_run,
};
