/* The settings table and its getters and setters. */
#include "settings.h"

#include <stdio.h>
#include <string.h>

#include "center.h"
#include "cmd.h"
#include "cpu_join.h"
#include "cpu_simd.h"
#include "curve_plan.h"
#include "devices.h"
#include "exact_path.h"
#include "kernels.h"
#include "err.h"
#include "fasted_opts.h"
#include "par.h"

static int parse_onoff(const char *what, const char *v, int *out)
{
    if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0)
        *out = 1;
    else if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0 || strcmp(v, "no") == 0)
        *out = 0;
    else
        return err_set(TCJ_EINVAL, "%s: expected on or off, got '%s'", what, v);
    return 0;
}

static int parse_int(const char *what, const char *v, size_t max, size_t *out)
{
    int rc = cmd_parse_size(v, what, out);
    if (rc)
        return rc;
    if (*out > max)
        return err_set(TCJ_EINVAL, "%s: at most %zu, got '%s'", what, max, v);
    return 0;
}

static void get_threads(const session *s, char *b, size_t n)
{
    if (s->eopt.threads)
        snprintf(b, n, "%d", s->eopt.threads);
    else
        snprintf(b, n, "0 (one per core)");
}
/* More threads than cores is allowed (a person may mean to oversubscribe,
 * or set up a run for another machine), but never silently. */
static void note_threads(const session *s, char *b, size_t n)
{
    const long cores = par_cores();
    b[0] = '\0';
    if (s->eopt.threads > cores)
        snprintf(b, n, "this machine has %ld cores; the %d threads share them", cores,
                 s->eopt.threads);
}
static int set_threads(session *s, char **v)
{
    size_t x;
    int rc = parse_int("threads", v[0], 4096, &x);
    if (!rc)
        s->eopt.threads = (int)x;
    return rc;
}

static void get_cpu_index(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", cpu_index_name(cpu_join_index_want(&s->eopt)));
}
static int set_cpu_index(session *s, char **v)
{
    const int x = cpu_index_parse(v[0]);
    if (x < 0)
        return err_set(TCJ_EINVAL, "cpu-index: expected auto, on or off, got '%s'", v[0]);
    s->eopt.cpu_index = x;
    return 0;
}

static void get_cpu_simd(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", cpu_simd_name((cpu_simd_isa)s->eopt.cpu_simd));
}
/* A path this CPU lacks is kept (the session may be meant for another
 * machine); the runs here take the widest below it, and say so in their
 * variant. */
static void note_cpu_simd(const session *s, char *b, size_t n)
{
    const cpu_simd_isa want = (cpu_simd_isa)s->eopt.cpu_simd;
    b[0] = '\0';
    if (want != CPU_SIMD_AUTO && !cpu_simd_has(want))
        snprintf(b, n, "this CPU has no %s; the CPU engines take %s here", cpu_simd_name(want),
                 cpu_simd_get(want)->name);
}
static int set_cpu_simd(session *s, char **v)
{
    const int x = cpu_simd_parse(v[0]);
    if (x < 0)
        return err_set(TCJ_EINVAL, "cpu-simd: expected auto, scalar, avx2 or avx512, got '%s'",
                       v[0]);
    s->eopt.cpu_simd = x;
    return 0;
}

static void get_symmetric(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", s->eopt.symmetric ? "on" : "off");
}
static int set_symmetric(session *s, char **v)
{
    return parse_onoff("symmetric", v[0], &s->eopt.symmetric);
}

static void get_opt(const session *s, char *b, size_t n)
{
    size_t k = (size_t)snprintf(b, n, "%s", s->eopt.fasted_off ? "off:" : "all on");
    for (const fasted_switch *w = fasted_switches; w->name && k < n; w++)
        if (s->eopt.fasted_off & w->bit)
            k += (size_t)snprintf(b + k, n - k, " %s", w->name);
}
static int set_opt(session *s, char **v)
{
    int on;
    if (strcmp(v[0], "all") == 0) {
        /* The way back to the paper's configuration in one line. */
        int rc = parse_onoff("opt", v[1], &on);
        if (rc)
            return rc;
        if (!on)
            return err_set(TCJ_EINVAL, "opt: only one switch can be off at a time; "
                                       "set opt all on turns every one back on");
        s->eopt.fasted_off = 0;
        return 0;
    }
    const fasted_switch *w = fasted_switch_find(v[0]);
    if (!w) {
        char names[256] = "";
        size_t k = 0;
        for (const fasted_switch *x = fasted_switches; x->name && k < sizeof names; x++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? " " : "", x->name);
        return err_set(TCJ_EINVAL, "opt: unknown switch '%s' (one of: %s)", v[0], names);
    }
    int rc = parse_onoff("opt", v[1], &on);
    if (rc)
        return rc;
    /* Each one-off set is a compiled kernel variant: refuse a second switch
     * now rather than at the next run. */
    unsigned other = s->eopt.fasted_off & ~w->bit;
    if (!on && other)
        for (const fasted_switch *x = fasted_switches; x->name; x++)
            if (other & x->bit)
                return err_set(TCJ_EINVAL,
                               "opt: %s is already off and only one switch can be off at a "
                               "time; set opt %s on (or set opt all on) first",
                               x->name, x->name);
    if (on)
        s->eopt.fasted_off &= ~w->bit;
    else
        s->eopt.fasted_off |= w->bit;
    return 0;
}

static void get_ted(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", s->eopt.ted_paper ? "paper" : "redesigned");
}
static int set_ted(session *s, char **v)
{
    if (strcmp(v[0], "paper") == 0)
        s->eopt.ted_paper = 1;
    else if (strcmp(v[0], "redesigned") == 0)
        s->eopt.ted_paper = 0;
    else
        return err_set(TCJ_EINVAL, "ted: expected paper or redesigned, got '%s'", v[0]);
    return 0;
}

static void get_index_k(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%d", s->eopt.index_k);
}
static int set_index_k(session *s, char **v)
{
    size_t x;
    int rc = parse_int("index-k", v[0], 64, &x);
    if (!rc && x == 0)
        rc = err_set(TCJ_EINVAL, "index-k: expected 1 to 64, got '%s'", v[0]);
    if (!rc)
        s->eopt.index_k = (int)x;
    return rc;
}

static void get_ladder_rung(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%d", s->eopt.ladder_rung ? s->eopt.ladder_rung : KERN_LADDER_OWN);
}
/* Only the rungs with a kernel file of their own: the later ones are
 * FASTED's kernel, run as their engines. */
static int set_ladder_rung(session *s, char **v)
{
    size_t x;
    int rc = parse_int("ladder-rung", v[0], KERN_LADDER_OWN, &x);
    if (!rc && x == 0)
        rc = err_set(TCJ_EINVAL, "ladder-rung: expected 1 to %d, got '%s'", KERN_LADDER_OWN, v[0]);
    if (!rc)
        s->eopt.ladder_rung = (int)x;
    return rc;
}

static void get_batch(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%zu", s->eopt.batch_pairs);
}
static int set_batch(session *s, char **v)
{
    size_t x;
    int rc = parse_int("batch", v[0], (size_t)1 << 32, &x);
    if (!rc && x < 1024)
        rc = err_set(TCJ_EINVAL, "batch: expected at least 1024 pairs, got '%s'", v[0]);
    if (!rc)
        s->eopt.batch_pairs = x;
    return rc;
}

static void get_device(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%d", s->eopt.device);
}
static int set_device(session *s, char **v)
{
    size_t x;
    int rc = parse_int("device", v[0], 255, &x);
    if (!rc)
        s->eopt.device = (int)x;
    return rc;
}

static void get_gpu_mem(const session *s, char *b, size_t n)
{
    if (s->eopt.gpu_mem)
        snprintf(b, n, "%zu", s->eopt.gpu_mem);
    else
        snprintf(b, n, "all");
}
static int set_gpu_mem(session *s, char **v)
{
    size_t x = 0;
    int rc = strcmp(v[0], "all") == 0 ? 0 : parse_int("gpu-mem", v[0], (size_t)1 << 50, &x);
    if (!rc && x && x < ((size_t)1 << 20))
        rc = err_set(TCJ_EINVAL, "gpu-mem: expected all or at least 1M bytes, got '%s'", v[0]);
    if (!rc)
        s->eopt.gpu_mem = x;
    return rc;
}

static void get_int8_scale(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", s->eopt.int8_scale ? "on" : "off");
}
static int set_int8_scale(session *s, char **v)
{
    return parse_onoff("int8-scale", v[0], &s->eopt.int8_scale);
}

static void get_shift(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", s->eopt.shift ? "on" : "off");
}
static int set_shift(session *s, char **v)
{
    return parse_onoff("shift", v[0], &s->eopt.shift);
}

static void get_fp8_acc(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", s->eopt.fp8_acc_fast ? "fast" : "fp32");
}
static int set_fp8_acc(session *s, char **v)
{
    if (strcmp(v[0], "fp32") == 0)
        s->eopt.fp8_acc_fast = 0;
    else if (strcmp(v[0], "fast") == 0)
        s->eopt.fp8_acc_fast = 1;
    else
        return err_set(TCJ_EINVAL, "fp8-acc: expected fp32 or fast, got '%s'", v[0]);
    return 0;
}

static void get_center(const session *s, char *b, size_t n)
{
    if (s->eopt.center == CENTER_DEFAULT)
        snprintf(b, n, "default");
    else
        snprintf(b, n, "%s", center_name(s->eopt.center));
}
static int set_center(session *s, char **v)
{
    static const int vals[] = {CENTER_AUTO, CENTER_ON, CENTER_OFF, CENTER_LOCAL, CENTER_DEFAULT};
    for (size_t k = 0; k < sizeof vals / sizeof *vals; k++)
        if (strcmp(v[0], center_name(vals[k])) == 0) {
            s->eopt.center = vals[k];
            return 0;
        }
    return err_set(TCJ_EINVAL, "center: expected auto, on, off, local or default, got '%s'", v[0]);
}

const char *settings_mode_name(join_mode m)
{
    switch (m) {
    case JOIN_COUNT:
        return "count";
    case JOIN_PERPOINT:
        return "perpoint";
    case JOIN_PAIRS:
        return "pairs";
    case JOIN_HIST:
        return "hist";
    }
    return "?";
}

static void get_mode(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", settings_mode_name(s->mode));
}
static int set_mode(session *s, char **v)
{
    if (strcmp(v[0], "count") == 0)
        s->mode = JOIN_COUNT;
    else if (strcmp(v[0], "perpoint") == 0)
        s->mode = JOIN_PERPOINT;
    else if (strcmp(v[0], "pairs") == 0)
        s->mode = JOIN_PAIRS;
    else
        return err_set(TCJ_EINVAL, "mode: expected count, perpoint or pairs, got '%s'", v[0]);
    return 0;
}

static void get_out(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", s->out_path[0] ? s->out_path : "(none)");
}
static int set_out(session *s, char **v)
{
    if (strlen(v[0]) >= sizeof s->out_path)
        return err_set(TCJ_EINVAL, "out: path too long");
    snprintf(s->out_path, sizeof s->out_path, "%s", strcmp(v[0], "none") == 0 ? "" : v[0]);
    return 0;
}

static void get_format(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", s->out_format);
}
static int set_format(session *s, char **v)
{
    if (strcmp(v[0], "bin32") && strcmp(v[0], "bin64") && strcmp(v[0], "csv"))
        return err_set(TCJ_EINVAL, "format: expected bin32, bin64 or csv, got '%s'", v[0]);
    snprintf(s->out_format, sizeof s->out_format, "%s", v[0]);
    return 0;
}

static void get_devices(const session *s, char *b, size_t n)
{
    devices_describe(&s->eopt, b, n);
}
static int set_devices(session *s, char **v)
{
    return devices_parse(v[0], &s->eopt);
}

static void get_exact_path(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", exact_path_name(s->eopt.exact_path));
}
static int set_exact_path(session *s, char **v)
{
    return exact_path_parse(v[0], &s->eopt.exact_path);
}

static void get_curve_route(const session *s, char *b, size_t n)
{
    snprintf(b, n, "%s", curve_route_name(s->eopt.curve_route));
}
static int set_curve_route(session *s, char **v)
{
    return curve_route_parse(v[0], &s->eopt.curve_route);
}

/* One row per setting: name, value words, help, value count, completion of
 * each value word, getter, setter, note, whether each run's options carry
 * it (settings.h). */
/* Which engines' runs each setting makes (setting.in_options). */
static int opt_cpu(const engine *e)
{
    return !e->gpu;
}
static int opt_gpu(const engine *e)
{
    return e->gpu;
}
static int opt_centers(const engine *e)
{
    return e->centers;
}
static int opt_shifts(const engine *e)
{
    return e->shifts;
}
static int opt_exact_path(const engine *e)
{
    return strcmp(e->name, "exact") == 0;
}
static int opt_int8(const engine *e)
{
    return e->lab && strcmp(e->lab, "int8") == 0;
}
static int opt_fp8(const engine *e)
{
    return e->gpu && e->lab && strncmp(e->lab, "fp8", 3) == 0;
}
static int opt_ladder(const engine *e)
{
    return strcmp(e->name, "ladder") == 0;
}

/* clang-format off */
const setting settings_table[] = {
    {"threads", "N", "CPU engine threads, 0 = one per core",
     1, {NULL, NULL}, get_threads, set_threads, note_threads, NULL},
    {"cpu-index", "auto|on|off",
     "CPU engines' grid index: where it prunes, wherever it can be built, or never",
     1, {"auto|on|off", NULL}, get_cpu_index, set_cpu_index, NULL, opt_cpu},
    {"cpu-simd", "auto|scalar|avx2|avx512",
     "CPU engines' kernels: the widest instruction set the CPU has, or this one",
     1, {"auto|scalar|avx2|avx512", NULL}, get_cpu_simd, set_cpu_simd, note_cpu_simd, opt_cpu},
    {"symmetric", "on|off", "GPU engines: compute tiles on or above the diagonal only",
     1, {"on|off", NULL}, get_symmetric, set_symmetric, NULL, NULL},
    {"opt", "NAME|all on|off", "turn one FASTED optimization off, or all back on",
     2, {"@switch", "on|off"}, get_opt, set_opt, NULL, NULL},
    {"ted", "paper|redesigned", "ted engine kernel: the TED-Join paper's or the redesigned one",
     1, {"paper|redesigned", NULL}, get_ted, set_ted, NULL, NULL},
    {"index-k", "N", "ted-index: dimensions covered by the grid index",
     1, {NULL, NULL}, get_index_k, set_index_k, NULL, NULL},
    {"ladder-rung", "N", "ladder engine: the teaching ladder's rung it runs (1..10, ladder lists them)",
     1, {NULL, NULL}, get_ladder_rung, set_ladder_rung, NULL, opt_ladder},
    {"batch", "N", "pairs per batch handed to a sink",
     1, {NULL, NULL}, get_batch, set_batch, NULL, NULL},
    {"device", "N", "CUDA device ordinal",
     1, {NULL, NULL}, get_device, set_device, NULL, NULL},
    {"devices", "all|default|N,M,...", "GPU engines: spread each run over these GPUs",
     1, {"all|default", NULL}, get_devices, set_devices, NULL, NULL},
    {"gpu-mem", "BYTES|all", "GPU engines: device memory a run may hold; buffers shrink, larger data stream",
     1, {"all", NULL}, get_gpu_mem, set_gpu_mem, NULL, opt_gpu},
    {"center", "auto|on|off|local|default",
     "low-precision engines: subtract column means first (default: auto for exact and FP8)",
     1, {"auto|on|off|local|default", NULL}, get_center, set_center, NULL, opt_centers},
    {"exact-path", "auto|pass|grid|clusters|tiles",
     "exact: FP16 pass + FP64 band, FP64 grid join, the pass by clusters or by tiles within eps "
     "(auto: grid at d <= 4, large band; tiles at d <= 16; clusters apart)",
     1, {"auto|pass|grid|clusters|tiles", NULL}, get_exact_path, set_exact_path, NULL, opt_exact_path},
    {"curve-route", "auto|device|host",
     "dbscan curve: the device where the engine can, required, or the host's sinks and merging "
     "(the reference)",
     1, {"auto|device|host", NULL}, get_curve_route, set_curve_route, NULL, NULL},
    {"int8-scale", "on|off",
     "int8 engines: quantize data that are not 8-bit integers instead of refusing them",
     1, {"on|off", NULL}, get_int8_scale, set_int8_scale, NULL, opt_int8},
    {"shift", "on|off",
     "unsigned formats: translate each column by its minimum instead of refusing negatives",
     1, {"on|off", NULL}, get_shift, set_shift, NULL, opt_shifts},
    {"fp8-acc", "fp32|fast",
     "FP8 engines (Hopper): FP32 sums over 256-value k chunks, or the tensor core's own",
     1, {"fp32|fast", NULL}, get_fp8_acc, set_fp8_acc, NULL, opt_fp8},
    {"mode", "count|perpoint|pairs", "what run produces: a count, per-point counts or pairs",
     1, {"count|perpoint|pairs", NULL}, get_mode, set_mode, NULL, NULL},
    {"out", "FILE|none", "where run writes pairs or per-point counts",
     1, {"@file", NULL}, get_out, set_out, NULL, NULL},
    {"format", "bin32|bin64|csv", "pair file format",
     1, {"bin32|bin64|csv", NULL}, get_format, set_format, NULL, NULL},
    {NULL, NULL, NULL, 0, {NULL, NULL}, NULL, NULL, NULL, NULL},
};
/* clang-format on */

const setting *setting_find(const char *name)
{
    for (const setting *t = settings_table; t->name; t++)
        if (strcmp(t->name, name) == 0)
            return t;
    return NULL;
}

void settings_default(session *s)
{
    engine_opts_default(&s->eopt);
    s->mode = JOIN_COUNT;
    s->out_path[0] = '\0';
    snprintf(s->out_format, sizeof s->out_format, "bin32");
}

void settings_describe(const session *s, const engine *e, char *buf, size_t size)
{
    char offs[160] = "";
    size_t k = 0;
    for (const fasted_switch *w = fasted_switches; w->name && k < sizeof offs; w++)
        if (s->eopt.fasted_off & w->bit)
            k += (size_t)snprintf(offs + k, sizeof offs - k, "%s%s", k ? "," : "", w->name);
    int w =
        snprintf(buf, size, "threads=%d symmetric=%s ted=%s index-k=%d batch=%zu device=%d off=%s",
                 s->eopt.threads, s->eopt.symmetric ? "on" : "off",
                 s->eopt.ted_paper ? "paper" : "redesigned", s->eopt.index_k, s->eopt.batch_pairs,
                 s->eopt.device, k ? offs : "none");
    /* Only when set, so that runs on one device read as before. */
    if (devices_listed(&s->eopt) && w > 0 && (size_t)w < size) {
        char dv[200];
        devices_describe(&s->eopt, dv, sizeof dv);
        w += snprintf(buf + w, size - (size_t)w, " devices=%s", dv);
    }
    /* The rows that say so, each where it is not its default (runs made
     * with the defaults read as before). */
    session d;
    memset(&d, 0, sizeof d);
    settings_default(&d);
    for (const setting *t = settings_table; t->name && w > 0 && (size_t)w < size; t++) {
        if (!t->in_options || (e && !t->in_options(e)))
            continue;
        char v[128], v0[128];
        t->get(s, v, sizeof v);
        t->get(&d, v0, sizeof v0);
        if (strcmp(v, v0) != 0)
            w += snprintf(buf + w, size - (size_t)w, " %s=%s", t->name, v);
    }
}
