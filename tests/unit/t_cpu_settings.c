/* The CPU engines' paths as settings (set cpu-index, set cpu-simd; the
 * rows of src/cli/settings.c), driven through the command line into a
 * session with a log.
 * Test plan:
 *   1. every combination of the two settings reaches the engines: each
 *      run's variant names the kernels and says grid or blocks as asked,
 *      and cpu and cpu-exact find the pairs of an independent FP64 brute
 *      force (direct (a-b)^2, every ordered pair) written here; the
 *      per-point summary and the k-distances are those of auto;
 *   2. the runs table keeps the settings not at their defaults in each
 *      run's options, and compare reuses a stored run only when they
 *      match;
 *   3. a bad value is one error line naming the values, the setting keeps
 *      its value; a wrong number of words is the usage line;
 *   4. a path the CPU lacks: set keeps it with a note, and the runs name
 *      the narrower path they take. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cpu_simd.h"
#include "dataset.h"
#include "out.h"
#include "session.h"
#include "session_capture.h"
#include "settings.h"
#include "store.h"

static char *capture(session *s, const char *line)
{
    return exec_capture_as(s, line, 1);
}

/* The text of "key" in the first record of type in out: a string's
 * characters, a number, or an object or array whole; "" when absent. */
static const char *rec_field(const char *out, const char *type, const char *key, char *buf,
                             size_t size)
{
    char pat[96];
    snprintf(pat, sizeof pat, "{\"type\":\"%s\"", type);
    const char *rec = strstr(out, pat);
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = rec ? strstr(rec, pat) : NULL;
    buf[0] = '\0';
    if (!p)
        return buf;
    p += strlen(pat);
    size_t n;
    if (*p == '"') {
        p++;
        n = strcspn(p, "\"");
    } else if (*p == '{' || *p == '[') {
        const char open = *p, close = open == '{' ? '}' : ']';
        int depth = 0;
        for (n = 0; p[n]; n++) {
            depth += p[n] == open;
            depth -= p[n] == close;
            if (depth == 0) {
                n++;
                break;
            }
        }
    } else {
        n = strcspn(p, ",}");
    }
    snprintf(buf, size, "%.*s", (int)n, p);
    return buf;
}

static void open_session(session *s, const char *db)
{
    memset(s, 0, sizeof *s);
    settings_default(s);
    s->batch = 1;
    if (db && store_open(t_path(db), &s->db) == 0)
        s->session_id = store_session_begin(s->db, "t_cpu_settings", "test", "host-a");
}

static void close_session(session *s)
{
    if (s->db)
        store_close(s->db);
    dataset_free(&s->ds);
}

/* Ordered pairs (self included) within eps of the current dataset: the
 * direct form in FP64, in dimension order, as the cpu engine defines it. */
static unsigned long long brute_pairs(const session *s)
{
    const dataset *ds = &s->ds;
    const size_t n = ds->n, d = ds->d;
    double *x = malloc(n * d * sizeof *x);
    dataset_rows_f64(ds, 0, n, x);
    const double lim = s->eps * s->eps;
    unsigned long long pairs = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double acc = 0;
            for (size_t k = 0; k < d; k++) {
                const double u = x[i * d + k] - x[j * d + k];
                acc = acc + u * u;
            }
            pairs += acc <= lim;
        }
    free(x);
    return pairs;
}

static const char *const index_vals[] = {"auto", "on", "off"};
static const char *const simd_vals[] = {"auto", "scalar"};

TEST(cpu_settings_reach_the_engines)
{
    session s;
    open_session(&s, NULL);
    /* 3-D at a small eps: auto takes the grid index (6000 rows) */
    capture(&s, "set threads 2; gen uniform n=6000 d=3 seed=2; eps 0.03");
    CHECK(!s.failed && s.have_ds);
    const unsigned long long want = brute_pairs(&s);
    CHECK(want > s.ds.n);
    const char *widest = cpu_simd_get(CPU_SIMD_AUTO)->name;
    static char kd0[1 << 17], b[1 << 17];
    static char pp0[1 << 17];
    char line[128], kpath[32];
    pp0[0] = '\0';
    kd0[0] = '\0';
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < 2; m++) {
            snprintf(line, sizeof line, "set cpu-index %s; set cpu-simd %s", index_vals[i],
                     simd_vals[m]);
            capture(&s, line);
            CHECK_MSG(!s.failed, "%s", line);
            const char *path = m ? "scalar" : widest;
            snprintf(kpath, sizeof kpath, ", %s, ", path);
            const char *engines[] = {"cpu", "cpu-exact"};
            for (int e = 0; e < 2; e++) {
                char cmd[64];
                snprintf(cmd, sizeof cmd, "run %s", engines[e]);
                char *out = capture(&s, cmd);
                CHECK_MSG(strtoull(rec_field(out, "run", "pairs", b, sizeof b), NULL, 10) == want,
                          "%s, %s: %s pairs, the brute force %llu", line, cmd, b, want);
                rec_field(out, "run", "variant", b, sizeof b);
                CHECK_MSG(strstr(b, kpath) != NULL, "%s, %s: variant '%s' names no %s", line, cmd,
                          b, path);
                const int grid = strstr(b, "grid k=") != NULL;
                CHECK_MSG(grid == (i != 2), "%s, %s: variant '%s'", line, cmd, b);
            }
            /* the per-point summary, and the k-distances of every row */
            char *out = capture(&s, "run cpu mode=perpoint");
            rec_field(out, "run", "perpoint", b, sizeof b);
            CHECK(b[0] == '{');
            if (!pp0[0])
                snprintf(pp0, sizeof pp0, "%s", b);
            CHECK_MSG(strcmp(b, pp0) == 0, "%s: perpoint %s, auto's %s", line, b, pp0);
            out = capture(&s, "kdist 4");
            rec_field(out, "kdist", "variant", b, sizeof b);
            CHECK_MSG(strstr(b, kpath) != NULL, "%s, kdist: variant '%s' names no %s", line, b,
                      path);
            CHECK_MSG((strstr(b, "grid") != NULL) == (i != 2), "%s, kdist: variant '%s'", line, b);
            rec_field(out, "kdist", "points", b, sizeof b);
            CHECK(b[0] == '{');
            if (!kd0[0])
                snprintf(kd0, sizeof kd0, "%s", b);
            CHECK_MSG(strcmp(b, kd0) == 0, "%s: the k-distances differ from auto's", line);
        }
    close_session(&s);
}

static int text_cb(void *ctx, int ncol, const char *const *names, const char *const *values)
{
    char *buf = ctx;
    size_t k = strlen(buf);
    snprintf(buf + k, 4096 - k, "%s\n", values[0] ? values[0] : "");
    return 0;
}

TEST(runs_keep_the_paths_in_their_options)
{
    session s;
    open_session(&s, "options.db");
    CHECK(s.db != NULL);
    char *out = capture(&s, "set threads 2; gen uniform n=1500 d=6 seed=4; eps 0.25; run cpu");
    CHECK(!s.failed);
    out = capture(&s, "set cpu-simd scalar; set cpu-index off; run cpu");
    CHECK(!s.failed);
    /* the first run's options name neither (its defaults), the second's
     * both, after the fixed fields */
    char opts[4096] = "";
    store_query(s.db, "SELECT options FROM runs ORDER BY id", NULL, 0, text_cb, opts);
    char *second = strchr(opts, '\n');
    CHECK(second != NULL);
    *second++ = '\0';
    CHECK_MSG(strncmp(opts, "threads=2 ", 10) == 0 && strstr(opts, "cpu-") == NULL, "%s", opts);
    CHECK_MSG(strncmp(second, opts, strlen(opts)) == 0 &&
                  strcmp(second + strlen(opts), " cpu-index=off cpu-simd=scalar\n") == 0,
              "%s", second);

    /* compare reuses the run whose options match: the scalar one now */
    char b[256];
    out = capture(&s, "compare cpu-fp16 cpu");
    CHECK(!s.failed);
    CHECK_STR_CONTAINS(rec_field(out, "compare", "reused_runs", b, sizeof b), "2");
    /* back at auto: the first run, not the scalar one */
    out = capture(&s, "set cpu-simd auto; set cpu-index auto; compare cpu-fp16 cpu");
    CHECK(!s.failed);
    rec_field(out, "compare", "reused_runs", b, sizeof b);
    CHECK_MSG(strstr(b, "1") != NULL && strstr(b, "2") == NULL, "reused %s", b);
    close_session(&s);
}

TEST(a_bad_value_is_one_line)
{
    session s;
    open_session(&s, NULL);
    const setting *simd = setting_find("cpu-simd"), *idx = setting_find("cpu-index");
    CHECK(simd && idx);
    char v[64], *out;
    capture(&s, "set cpu-simd scalar; set cpu-index off");
    CHECK(!s.failed);
    struct {
        const char *line, *said;
    } bad[] = {
        {"set cpu-simd sse", "cpu-simd: expected auto, scalar, avx2 or avx512, got 'sse'"},
        {"set cpu-simd AVX2", "cpu-simd: expected auto, scalar, avx2 or avx512, got 'AVX2'"},
        {"set cpu-index sometimes", "cpu-index: expected auto, on or off, got 'sometimes'"},
        {"set cpu-index 1", "cpu-index: expected auto, on or off, got '1'"},
        {"set cpu-index on off", "Usage: set cpu-index auto|on|off"},
        {"set cpu-simd", NULL}, /* shows the value */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        s.failed = 0;
        out = exec_capture_as(&s, bad[k].line, 0);
        if (!bad[k].said) {
            CHECK(!s.failed);
            CHECK_MSG(strncmp(out, "cpu-simd scalar\n", 16) == 0, "%s", out);
            continue;
        }
        CHECK_MSG(s.failed, "%s", bad[k].line);
        char want[160];
        snprintf(want, sizeof want, "error: %s\n", bad[k].said);
        CHECK_MSG(strcmp(out, want) == 0, "%s: '%s'", bad[k].line, out);
    }
    simd->get(&s, v, sizeof v);
    CHECK(strcmp(v, "scalar") == 0);
    idx->get(&s, v, sizeof v);
    CHECK(strcmp(v, "off") == 0);
    close_session(&s);
}

TEST(a_path_the_cpu_lacks_is_kept_with_a_note)
{
    session s;
    open_session(&s, NULL);
    const setting *simd = setting_find("cpu-simd");
    capture(&s, "gen uniform n=300 d=5 seed=1; eps 0.3");
    for (int isa = CPU_SIMD_SCALAR; isa < CPU_SIMD_NISA; isa++) {
        const char *name = cpu_simd_name((cpu_simd_isa)isa);
        char line[64], note[256], b[256];
        snprintf(line, sizeof line, "set cpu-simd %s", name);
        capture(&s, line);
        CHECK(!s.failed);
        simd->note(&s, note, sizeof note);
        const char *runs = cpu_simd_get((cpu_simd_isa)isa)->name;
        if (cpu_simd_has((cpu_simd_isa)isa)) {
            CHECK_MSG(note[0] == '\0', "%s: %s", name, note);
            CHECK(strcmp(runs, name) == 0);
        } else {
            char want[128];
            snprintf(want, sizeof want, "this CPU has no %s; the CPU engines take %s here", name,
                     runs);
            CHECK_MSG(strcmp(note, want) == 0, "%s: '%s'", name, note);
        }
        rec_field(capture(&s, "run cpu"), "run", "variant", b, sizeof b);
        snprintf(line, sizeof line, ", %s, ", runs);
        CHECK_MSG(strstr(b, line) != NULL, "set cpu-simd %s: variant '%s'", name, b);
    }
    close_session(&s);
}
