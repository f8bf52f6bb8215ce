/* compare's reuse of stored runs (src/cli/reuse.c, store_reusable_run): which
 * runs stand for new ones is checked against the runs table read back
 * here, and a comparison with reused runs gives the same accuracy as a
 * fresh one. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "out.h"
#include "session.h"
#include "settings.h"
#include "store.h"

static char *capture(session *s, const char *line)
{
    static out_buf b;
    out_buf_free(&b);
    out_set_json(1);
    out_set_sink(out_buf_sink, &b);
    cmd_exec(s, line);
    out_reset_sink();
    out_set_json(0);
    return b.data ? b.data : (char *)"";
}

static int count_cb(void *ctx, int ncol, const char *const *names, const char *const *values)
{
    *(long *)ctx = values[0] ? atol(values[0]) : -1;
    return 0;
}

static long nruns(session *s)
{
    long n = -1;
    store_query(s->db, "SELECT count(*) FROM runs", NULL, 0, count_cb, &n);
    return n;
}

/* The value of "key": in the compare record of out, as text. */
static const char *field(const char *out, const char *key, char *buf, size_t size)
{
    const char *rec = strstr(out, "{\"type\":\"compare\"");
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = rec ? strstr(rec, pat) : NULL;
    if (!p)
        return "";
    p += strlen(pat);
    size_t n = strcspn(p, ",}");
    if (*p == '[')
        n = strcspn(p, "]") + 1;
    snprintf(buf, size, "%.*s", (int)n, p);
    return buf;
}

/* A session logging into t_tmpdir()/file, as host-a: 0, or store_open's
 * error. */
static int logged(session *s, const char *file)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", t_tmpdir(), file);
    memset(s, 0, sizeof *s);
    settings_default(s);
    s->batch = 1;
    const int rc = store_open(path, &s->db);
    if (rc == 0)
        s->session_id = store_session_begin(s->db, "t_reuse", "test", "host-a");
    return rc;
}

TEST(compare_reuses_matching_runs)
{
    session s;
    CHECK_EQ_INT(logged(&s, "reuse.db"), 0);
    capture(&s, "gen uniform n=1500 d=6 seed=4; eps 0.25; run cpu");
    CHECK(!s.failed);
    CHECK_EQ_INT(nruns(&s), 1);

    char b1[256], b2[256];
    char *out = capture(&s, "compare cpu-fp16 cpu");
    CHECK(!s.failed);
    CHECK_EQ_INT(nruns(&s), 2); /* cpu's run 1 stood for a new one */
    /* side b of the record is cpu's stored run 1 */
    const char *side_b = strstr(out, "{\"type\":\"compare\"");
    side_b = side_b ? strstr(side_b, "\"b\":{") : NULL;
    CHECK(side_b && strncmp(strstr(side_b, "\"run_id\":"), "\"run_id\":1,", 11) == 0);
    CHECK(strcmp(field(out, "reused_runs", b1, sizeof b1), "[1]") == 0);
    char overlap[64], errmax[64];
    field(out, "overlap", overlap, sizeof overlap);
    field(out, "err_max", errmax, sizeof errmax);

    out = capture(&s, "compare cpu-fp16 cpu");
    CHECK_EQ_INT(nruns(&s), 2); /* both sides reused */
    CHECK(strcmp(field(out, "reused_runs", b1, sizeof b1), "[2,1]") == 0);
    CHECK(strcmp(field(out, "overlap", b2, sizeof b2), overlap) == 0);

    out = capture(&s, "compare cpu-fp16 cpu fresh");
    CHECK_EQ_INT(nruns(&s), 4);
    CHECK(strcmp(field(out, "reused_runs", b1, sizeof b1), "[]") == 0);
    CHECK(strcmp(field(out, "overlap", b2, sizeof b2), overlap) == 0);
    CHECK(strcmp(field(out, "err_max", b2, sizeof b2), errmax) == 0);

    /* another eps, other options: nothing to reuse */
    capture(&s, "eps 0.2500001; compare cpu-fp16 cpu");
    CHECK_EQ_INT(nruns(&s), 6);
    capture(&s, "eps 0.25; set threads 1; compare cpu-fp16 cpu");
    CHECK_EQ_INT(nruns(&s), 8);
    /* the same content generated again (a new datasets row? no: same
     * hash) with the same settings: reused */
    capture(&s, "gen uniform n=1500 d=6 seed=4; eps 0.25; compare cpu-fp16 cpu");
    CHECK_EQ_INT(nruns(&s), 8);
    /* other content: not */
    capture(&s, "gen uniform n=1500 d=6 seed=5; eps 0.25; compare cpu-fp16 cpu");
    CHECK_EQ_INT(nruns(&s), 10);
    /* runs made on another host are not timings of this one */
    s.session_id = store_session_begin(s.db, "t_reuse", "test", "host-b");
    capture(&s, "compare cpu-fp16 cpu");
    CHECK_EQ_INT(nruns(&s), 12);
    CHECK(!s.failed);
    CHECK_STR_CONTAINS(capture(&s, "compare cpu-fp16 cpu stale"), "Usage: compare");
    store_close(s.db);
    dataset_free(&s.ds);
}

/* A setting that changes a run's result or its cost is part of that
 * run's options: a run made under another value of it is not reused.
 * cpu-fp16 centred and not round other values to FP16, so give other
 * distances; cpu's FP64 run is the same either way, and is reused. */
TEST(compare_reuses_no_run_of_other_settings)
{
    session s;
    CHECK_EQ_INT(logged(&s, "reuse-settings.db"), 0);
    capture(&s, "gen uniform n=1200 d=6 seed=9; set center off; eps 0.3; run cpu-fp16; run cpu");
    CHECK(!s.failed);
    CHECK_EQ_INT(nruns(&s), 2);
    char b1[256];
    char *out = capture(&s, "set center on; compare cpu-fp16 cpu");
    CHECK(!s.failed);
    CHECK_EQ_INT(nruns(&s), 3); /* cpu-fp16 ran again, centred; cpu's run reused */
    CHECK_MSG(strcmp(field(out, "reused_runs", b1, sizeof b1), "[2]") == 0, "reused %s", b1);
    /* and back: each value finds its own run */
    out = capture(&s, "set center off; compare cpu-fp16 cpu");
    CHECK_EQ_INT(nruns(&s), 3);
    CHECK_MSG(strcmp(field(out, "reused_runs", b1, sizeof b1), "[1,2]") == 0, "reused %s", b1);
    out = capture(&s, "set center on; compare cpu-fp16 cpu");
    CHECK_EQ_INT(nruns(&s), 3);
    CHECK_MSG(strcmp(field(out, "reused_runs", b1, sizeof b1), "[3,2]") == 0, "reused %s", b1);
    store_close(s.db);
    dataset_free(&s.ds);
}

/* Each setting away from its default is in the options of the runs it
 * changes and of no other engine's (settings_describe, the reuse key). */
TEST(run_options_name_the_settings_each_engine_reads)
{
    static const struct {
        const char *set, *opt;      /* the setting as typed, as the options name it */
        const char *in[3], *out[3]; /* engines whose runs it changes, and not */
    } c[] = {
        {"center on", "center=on", {"cpu-fp16", "exact", "fasted"}, {"cpu", "fp64", "cpu-ue5m3"}},
        {"exact-path tiles", "exact-path=tiles", {"exact", NULL}, {"cpu", "cpu-exact", "fasted"}},
        {"gpu-mem 64M", "gpu-mem=", {"exact", "fasted", "fp64"}, {"cpu", "cpu-fp16", NULL}},
        {"int8-scale on", "int8-scale=on", {"int8", "cpu-int8", NULL}, {"cpu", "fasted", NULL}},
        {"shift on", "shift=on", {"ue5m3", "cpu-ue4m4", NULL}, {"cpu", "fasted", "cpu-int8"}},
        {"fp8-acc fast",
         "fp8-acc=fast",
         {"fp8-e4m3", "fp8-e5m2", NULL},
         {"cpu-fp8-e4m3", "fasted", NULL}},
        {"ladder-rung 3", "ladder-rung=3", {"ladder", NULL}, {"fasted", "cpu", NULL}},
        {"cpu-index off", "cpu-index=off", {"cpu", "cpu-fp16", NULL}, {"fasted", "exact", NULL}},
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        session s;
        memset(&s, 0, sizeof s);
        settings_default(&s);
        char line[64], opts[512];
        snprintf(line, sizeof line, "set %s", c[k].set);
        capture(&s, line);
        CHECK_MSG(!s.failed, "%s", line);
        for (int side = 0; side < 2; side++)
            for (int j = 0; j < 3; j++) {
                const char *name = side ? c[k].out[j] : c[k].in[j];
                if (!name)
                    continue;
                const engine *e = engine_find(name);
                CHECK_MSG(e, "no engine %s", name);
                settings_describe(&s, e, opts, sizeof opts);
                CHECK_MSG((strstr(opts, c[k].opt) != NULL) == !side, "%s: %s's options '%s'", line,
                          name, opts);
            }
        /* and at the default, in no run's */
        settings_default(&s);
        settings_describe(&s, NULL, opts, sizeof opts);
        CHECK_MSG(!strstr(opts, c[k].opt), "default: '%s'", opts);
    }
}

/* A reused run keeps its phases' names: the grid index's time is "index"
 * in the stored run read back (store_run_json's phases), and the reused
 * side of a comparison carries the same names, none of them "other". */
TEST(reused_run_keeps_phase_names)
{
    session s;
    CHECK_EQ_INT(logged(&s, "reuse-phases.db"), 0);
    /* low-dimensional data with a small eps: cpu builds its grid index */
    char *out = capture(&s, "set cpu-index on; gen uniform n=4000 d=2 seed=4; eps 0.02; run cpu");
    CHECK(!s.failed);
    CHECK_STR_CONTAINS(out, "\"index\":");
    out = capture(&s, "compare cpu-fp16 cpu");
    CHECK(!s.failed);
    char b1[256];
    CHECK(strcmp(field(out, "reused_runs", b1, sizeof b1), "[1]") == 0);
    const char *side_b = strstr(out, "{\"type\":\"compare\"");
    side_b = side_b ? strstr(side_b, "\"b\":{") : NULL;
    CHECK(side_b != NULL);
    if (side_b) {
        CHECK_STR_CONTAINS(side_b, "\"index\":");
        CHECK(strstr(out, "\"other\"") == NULL);
    }
    store_close(s.db);
    dataset_free(&s.ds);
}

/* precisions reuses the reference's stored run, as compare does: after
 * run cpu, a lab of one format adds one run (the format's), names the
 * reused run, and judges against the same pair count; fresh runs the
 * reference again. */
TEST(precisions_reuses_the_reference_run)
{
    session s;
    CHECK_EQ_INT(logged(&s, "reuse-lab.db"), 0);
    capture(&s, "gen uniform n=1500 d=6 seed=4; eps 0.25; run cpu");
    CHECK_EQ_INT(nruns(&s), 1);
    static out_buf b;
    out_buf_free(&b);
    out_set_sink(out_buf_sink, &b);
    cmd_exec(&s, "precisions cpu fp16");
    out_reset_sink();
    CHECK(!s.failed);
    CHECK_EQ_INT(nruns(&s), 2);
    CHECK_STR_CONTAINS(b.data ? b.data : "", "reference: run 1 of cpu");
    CHECK_STR_CONTAINS(b.data ? b.data : "", "each judged against cpu (run 1: ");
    capture(&s, "precisions cpu fp16 fresh");
    CHECK(!s.failed);
    CHECK_EQ_INT(nruns(&s), 4);
    store_close(s.db);
    dataset_free(&s.ds);
}
