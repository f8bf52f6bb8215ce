/* Teaching tables: the build-time generators (scripts/gen_*.sh) on the
 * fixtures under tests/fixtures/, embedded here by the Makefile, and what
 * explain, ablate and profile table6 print from them without a GPU. The
 * expected numbers are the fixtures' own (tests/fixtures/sass/README, the
 * fixture markdown, the fixture kernel files read back here). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cmd.h"
#include "err.h"
#include "fasted_opts.h"
#include "kernels.h"
#include "out.h"
#include "paper_tables.h"
#include "settings.h"
#include "store.h"
#include "teach.h"

#include "fixture_bench.c"
#include "fixture_notags.c"
#include "fixture_sass_cfg.c"
#include "fixture_sass_tmpl.c"
#include "fixture_tags.c"

static out_buf cap;

static void cap_begin(void)
{
    out_buf_free(&cap);
    out_set_sink(out_buf_sink, &cap);
}

static const char *cap_end(void)
{
    out_reset_sink();
    return cap.data ? cap.data : "";
}

/* Line `line` (1-based) of a file, newline kept. */
static void file_line(const char *path, int line, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    for (int k = 1; fgets(buf, (int)size, f); k++)
        if (k == line)
            break;
    fclose(f);
}

static const teach_excerpt *excerpt(const teach_excerpts *t, const char *tag)
{
    for (int k = 0; k < t->n; k++)
        if (strcmp(t->rows[k].tag, tag) == 0)
            return &t->rows[k];
    return NULL;
}

TEST(tags_one_line_and_blocks)
{
    CHECK_EQ_INT(fixture_tags.n, 5);
    CHECK_EQ_INT(fixture_tags.files, 2);
    /* A one-line tag is that line of the file, read back independently. */
    char want[256];
    const teach_excerpt *e = excerpt(&fixture_tags, "swizzle");
    CHECK(e != NULL);
    CHECK(strcmp(e->file, "tests/fixtures/kernel_tags/a.cu") == 0);
    file_line(e->file, e->line, want, sizeof want);
    CHECK(strcmp(e->text, want) == 0);
    CHECK_STR_CONTAINS(want, "/* [swizzle] */");
    /* A block: the lines between marker-only lines, quotes and backslashes
     * intact. */
    e = excerpt(&fixture_tags, "pipeline");
    CHECK(e != NULL);
    char l1[256], l2[256], both[512];
    file_line(e->file, e->line, l1, sizeof l1);
    file_line(e->file, e->line + 1, l2, sizeof l2);
    snprintf(both, sizeof both, "%s%s", l1, l2);
    CHECK(strcmp(e->text, both) == 0);
    CHECK_STR_CONTAINS(e->text, "load(\"a\\tb\", s); /* a \"quoted\" \\ backslash */");
    /* Markers on code lines stay; a nested block is in the outer one too. */
    e = excerpt(&fixture_tags, "order");
    CHECK(e != NULL);
    CHECK_EQ_INT(e->line, 4);
    CHECK_STR_CONTAINS(e->text, "int g(void) { /* [order] { */\n");
    CHECK_STR_CONTAINS(e->text, "    t += 2;\n");
    CHECK_STR_CONTAINS(e->text, "return t; } /* } */\n");
    e = excerpt(&fixture_tags, "residency");
    CHECK(e != NULL);
    CHECK(strcmp(e->text, "    t += 2;\n") == 0);
    CHECK_EQ_INT(e->line, 7);
}

TEST(tags_zero_and_explain_text)
{
    CHECK_EQ_INT(fixture_notags.n, 0);
    CHECK_EQ_INT(fixture_notags.files, 1);
    cap_begin();
    CHECK_EQ_INT(teach_print_excerpts(&fixture_notags, "swizzle", NULL), 0);
    CHECK(strcmp(cap_end(), "kernel lines: not tagged yet (no /* [swizzle] */ in this build's "
                            "kernel sources)\n") == 0);
    cap_begin();
    CHECK_EQ_INT(teach_print_excerpts(&fixture_tags, "swizzle", NULL), 1);
    CHECK(strcmp(cap_end(), "kernel lines tagged [swizzle]:\n"
                            "  tests/fixtures/kernel_tags/a.cu:5\n"
                            "    |     x ^= ch & 7; /* [swizzle] */\n") == 0);
}

TEST(tags_in_the_json_record)
{
    cap_begin();
    out_rec *r = out_rec_begin("explain");
    teach_print_excerpts(&fixture_tags, "swizzle", r);
    out_rec_end(r);
    CHECK_STR_CONTAINS(cap_end(), "{\"type\":\"explain\",\"excerpts\":[{\"file\":\"tests/fixtures/"
                                  "kernel_tags/a.cu\",\"line\":5,\"text\":\"    x ^= ch & 7; /* "
                                  "[swizzle] */\\n\"}]}\n");
}

TEST(tags_unclosed_block_is_an_error)
{
    char dir[] = "/tmp/tcj-tags-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[300], cmdline[700];
    snprintf(path, sizeof path, "%s/k.cu", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("int a;\n/* [swizzle] { */\nint b;\n", f);
    fclose(f);
    snprintf(cmdline, sizeof cmdline, "sh scripts/gen_kernel_tags.sh x %s 2>&1 >/dev/null", dir);
    FILE *p = popen(cmdline, "r");
    CHECK(p != NULL);
    char msg[512] = "";
    size_t got = fread(msg, 1, sizeof msg - 1, p);
    msg[got] = '\0';
    int st = pclose(p);
    CHECK(st != 0);
    char want[400];
    snprintf(want, sizeof want, "%s:3: block [swizzle] opened here is not closed", path);
    CHECK_STR_CONTAINS(msg, want);
    unlink(path);
    rmdir(dir);
}

static const teach_sass_row *sass(const teach_sass *t, const char *v)
{
    for (int k = 0; k < t->n; k++)
        if (strcmp(t->rows[k].variant, v) == 0)
            return &t->rows[k];
    return NULL;
}

TEST(sass_template_names)
{
    CHECK(strcmp(fixture_sass_tmpl.status, "") == 0);
    CHECK_EQ_INT(fixture_sass_tmpl.n, 6);
    CHECK(strcmp(fixture_sass_tmpl.rows[0].variant, "all-on") == 0);
    const teach_sass_row *a = sass(&fixture_sass_tmpl, "all-on");
    /* sm_90a's count kernel, not the PAIRS one (IMAD 50) nor sm_90's. */
    CHECK(strcmp(a->arch, "sm_90a") == 0);
    CHECK_EQ_INT(a->hmma, 8);
    CHECK_EQ_INT(a->ldsm, 4);
    CHECK_EQ_INT(a->ldgsts, 2);
    CHECK_EQ_INT(a->total, 20);
    const teach_sass_row *r = sass(&fixture_sass_tmpl, "no-swizzle");
    CHECK(r && r->total == 22 && r->hmma == 8);
    r = sass(&fixture_sass_tmpl, "no-async-copy");
    CHECK(r && r->ldgsts == 0 && r->sts == 6 && r->total == 24);
    r = sass(&fixture_sass_tmpl, "no-async-copy+pipeline");
    CHECK(r && r->ldgsts == 0 && r->sts == 3 && r->total == 21);
    r = sass(&fixture_sass_tmpl, "no-warp-tile");
    CHECK(r && r->hmma == 2 && r->ldsm == 2 && r->total == 12);
    r = sass(&fixture_sass_tmpl, "wgmma");
    CHECK(r && r->hgmma == 1 && r->utmaldg == 2 && r->total == 4);
    CHECK(sass(&fixture_sass_tmpl, "ted-kernel") == NULL);
}

TEST(sass_config_names_and_print)
{
    CHECK_EQ_INT(fixture_sass_cfg.n, 3);
    const teach_sass_row *a = sass(&fixture_sass_cfg, "all-on");
    CHECK(a && a->hmma == 16 && a->total == 34);
    const teach_sass_row *r = sass(&fixture_sass_cfg, "no-swizzle");
    CHECK(r && r->total == 38);
    r = sass(&fixture_sass_cfg, "no-async-copy+pipeline");
    CHECK(r && r->ldgsts == 0 && r->sts == 4);
    cap_begin();
    CHECK_EQ_INT(teach_print_sass(&fixture_sass_cfg, "no-swizzle", NULL), 0);
    const char *o = cap_end();
    CHECK_STR_CONTAINS(o, "SASS of the count kernel (sm_90a, cuobjdump at build time), no-swizzle "
                          "against all-on:\n");
    CHECK_STR_CONTAINS(o, "  HMMA              16           16       +0\n");
    CHECK_STR_CONTAINS(o, "  total             34           38       +4\n");
    /* No such kernel: said, and all-on's counts shown. */
    cap_begin();
    CHECK_EQ_INT(teach_print_sass(&fixture_sass_cfg, "no-order", NULL), 0);
    CHECK_STR_CONTAINS(cap_end(), "no kernel named no-order in this build's objects");
    /* Without cuobjdump: the reason, nothing else. */
    static const teach_sass none = {"not computed in this build: cuobjdump (CUDA toolkit) not "
                                    "found at build time",
                                    NULL, 0};
    cap_begin();
    CHECK_EQ_INT(teach_print_sass(&none, "no-swizzle", NULL), 0);
    CHECK(strcmp(cap_end(), "SASS counts: not computed in this build: cuobjdump (CUDA toolkit) "
                            "not found at build time\n") == 0);
}

TEST(sass_generator_without_cuobjdump)
{
    /* No cuobjdump anywhere: the table is empty and says why. */
    if (access("/usr/bin/cuobjdump", X_OK) == 0 || access("/bin/cuobjdump", X_OK) == 0)
        t_skip("skipped: cuobjdump is in /usr/bin or /bin");
    FILE *p = popen("PATH=/usr/bin:/bin CUDA_HOME=/nonexistent /bin/sh scripts/gen_sass_counts.sh "
                    "x build/obj/kernels/none.o 2>&1",
                    "r");
    CHECK(p != NULL);
    char buf[2048] = "";
    size_t got = fread(buf, 1, sizeof buf - 1, p);
    buf[got] = '\0';
    CHECK_EQ_INT(pclose(p), 0);
    CHECK_STR_CONTAINS(buf, "const teach_sass x = {\"not computed in this build: cuobjdump (CUDA "
                            "toolkit) not found at build time\", x_rows, 0};");
}

TEST(bench_tables_from_markdown)
{
    CHECK(strcmp(fixture_bench.label,
                 "Test GPU X1, 2026-01-02, commit abc1234; n=1000, d=64, uniform") == 0);
    CHECK_EQ_INT(fixture_bench.nrows, 3);
    CHECK(strcmp(fixture_bench.rows[0].name, "") == 0);
    CHECK(fixture_bench.rows[0].kernel_ms == 10.0);
    CHECK(strcmp(fixture_bench.rows[1].name, "swizzle") == 0);
    CHECK(fixture_bench.rows[1].slowdown == 2.5 && fixture_bench.rows[1].tflops == 80.0);
    CHECK(fixture_bench.rows[2].kernel_ms == 11.0); /* **11.0** read as 11 */
    CHECK(strcmp(fixture_bench.t6_label, "Test GPU X1, 2026-01-03, commit def5678") == 0);
    CHECK_EQ_INT(fixture_bench.nt6, 2);
    CHECK(fixture_bench.t6[0].v[0] == 12.5 && fixture_bench.t6[0].v[4] == 41);
    CHECK(isnan(fixture_bench.t6[0].v[5]));
    CHECK(strcmp(fixture_bench.t6[0].text[5], "out of smem") == 0);
    /* The real doc's table is embedded too: every row names a switch. */
    CHECK(teach_bench_doc.nrows > 0);
    for (int k = 0; k < teach_bench_doc.nrows; k++)
        CHECK_MSG(!teach_bench_doc.rows[k].name[0] ||
                      fasted_switch_find(teach_bench_doc.rows[k].name),
                  "docs/BENCHMARKS.md row '%s' is not a switch", teach_bench_doc.rows[k].name);
}

TEST(table6_stored_cells_from_the_doc)
{
    cap_begin();
    teach_print_t6_stored(&fixture_bench, "no GPU here");
    const char *o = cap_end();
    CHECK_STR_CONTAINS(o, "profile table6: NOT MEASURED HERE (no GPU here); Test GPU X1, "
                          "2026-01-03, commit def5678\n");
    /* Row DRAM: the fixture's 12.5 10 3 40 41 and text at ted d=4096; in
     * brackets the paper's Table 6 (../shared/reference/
     * fasted-paper-tables.md: 1.98 3.54 16.0 0.04 0.04 OOM), 'oos' for ted
     * at 4096. */
    char want[512], c[6][48];
    const char *cells[6] = {"12.5 (1.98)", "10.0 (3.54)", "3.0 (16)",
                            "40.0 (0.04)", "41.0 (0.04)", "— (oos)"};
    for (int k = 0; k < 6; k++)
        teach_cell(c[k], sizeof c[k], cells[k], 16);
    snprintf(want, sizeof want, "  %-24s %s %s %s %s %s %s\n", "DRAM throughput %", c[0], c[1],
             c[2], c[3], c[4], c[5]);
    CHECK_STR_CONTAINS(o, want);
    /* SM clock: MHz, whole numbers. */
    CHECK_STR_CONTAINS(o, "SM clock MHz");
    CHECK_STR_CONTAINS(o, "1975 (1120)"); /* the paper's 1.12 GHz at d=4096 */
    /* The source of the bracketed values, and no footnote that says
     * "measured here" under NOT MEASURED HERE. */
    CHECK_STR_CONTAINS(o, "(paper): Table 6 of B. Curless, M. Gowanlock");
    CHECK(strstr(o, "measured here") == NULL);
    /* A row the doc lacks stays empty. */
    const char *l2 = strstr(o, "  L2 hit rate %");
    CHECK(l2 != NULL);
    teach_cell(c[0], sizeof c[0], "— (89.8)", 16);
    snprintf(want, sizeof want, "  %-24s %s", "L2 hit rate %", c[0]);
    CHECK(l2 && strncmp(l2, want, strlen(want)) == 0);
}

TEST(slowdown_from_doc_then_session_log)
{
    double slow;
    char label[512];
    CHECK_EQ_INT(teach_slowdown(NULL, &fixture_bench, "swizzle", &slow, label, sizeof label),
                 TEACH_DOC);
    CHECK(slow == 2.5);
    CHECK(strcmp(label, "docs/BENCHMARKS.md: Test GPU X1, 2026-01-02, commit abc1234; n=1000, "
                        "d=64, uniform") == 0);
    CHECK_EQ_INT(teach_slowdown(NULL, &fixture_bench, "order", &slow, label, sizeof label),
                 TEACH_NONE);
    CHECK(slow == 0);

    const char *base = kern_fasted_variant_name(teach_off_bits("wgmma"));
    const char *swz = kern_fasted_variant_name(teach_off_bits("swizzle"));
    if (!teach_variant_compiled(swz))
        t_skip("skipped: built without CUDA (no variant names to find in the log)");
    char path[] = "/tmp/tcj-teach-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    unlink(path);
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    CHECK_EQ_INT(store_open(path, &s.db), 0);
    s.session_id = store_session_begin(s.db, "t_teach", "test", 0);
    /* Two ablates: the later one counts. Slowdowns 3.0 then 1.5. */
    const double times[2][2] = {{0.010, 0.030}, {0.020, 0.030}};
    for (int a = 0; a < 2; a++) {
        int64_t cid = store_command_begin(s.db, s.session_id, a ? " ablate n=10" : "ablate");
        for (int v = 0; v < 2; v++) {
            join_result res;
            memset(&res, 0, sizeof res);
            res.kernel_seconds = times[a][v];
            snprintf(res.device, sizeof res.device, "Test GPU");
            snprintf(res.variant, sizeof res.variant, "%s", v ? swz : base);
            store_run_rec r;
            memset(&r, 0, sizeof r);
            r.session_id = s.session_id;
            r.command_id = cid;
            r.engine = "fasted";
            r.variant = res.variant;
            r.device = res.device;
            r.n = 10;
            r.d = 4096;
            r.res = &res;
            CHECK(store_run(s.db, &r) > 0);
        }
        store_command_end(s.db, cid, 0, NULL, 0.1);
    }
    /* A later command that is not an ablate does not count. */
    int64_t cid = store_command_begin(s.db, s.session_id, "run fasted");
    store_command_end(s.db, cid, 0, NULL, 0.1);
    CHECK_EQ_INT(teach_slowdown(&s, &fixture_bench, "swizzle", &slow, label, sizeof label),
                 TEACH_SESSION);
    CHECK_NEAR(slow, 1.5, 1e-12);
    CHECK_STR_CONTAINS(label, "latest ablate in the session log: Test GPU, ");
    CHECK_STR_CONTAINS(label, "n=10 d=4096");
    /* A switch the log has no run of falls back to the doc. */
    CHECK_EQ_INT(teach_slowdown(&s, &fixture_bench, "pipeline", &slow, label, sizeof label),
                 TEACH_DOC);
    CHECK(slow == 1.1);
    store_close(s.db);
    unlink(path);
}

static char *exec_capture(session *s, const char *line)
{
    cap_begin();
    cmd_exec(s, line);
    return (char *)cap_end();
}

static void new_session(session *s)
{
    memset(s, 0, sizeof *s);
    settings_default(s);
    s->batch = 1;
}

/* The text after the first line, without the JSON record (the buffer sink
 * holds both; the record repeats the first line's reason). */
static char *after_first_line(const char *t)
{
    const char *nl = strchr(t, '\n');
    char *s = strdup(nl ? nl + 1 : "");
    char *rec = strstr(s, "{\"type\":");
    if (rec)
        *rec = '\0';
    return s;
}

static int same_after_first_line(const char *a, const char *b)
{
    char *x = after_first_line(a), *y = after_first_line(b);
    int same = strcmp(x, y) == 0 && x[0];
    free(x);
    free(y);
    return same;
}

TEST(ablate_and_table6_without_gpu_print_the_stored_tables)
{
    session s;
    new_session(&s);
    char *stored = strdup(exec_capture(&s, "ablate stored"));
    CHECK_EQ_INT(s.failed, 0);
    CHECK(strncmp(stored, "ablate: NOT MEASURED HERE (ablate stored); stored tables follow\n",
                  64) == 0);
    /* Every paper row with its figure and the slowdown 154 / TFLOPS. */
    for (const paper_t5_row *p = paper_t5; p->name; p++) {
        char row[128];
        if (p->tflops > 0)
            snprintf(row, sizeof row, "  %-20s %12.1f %8.2fx", p->name, p->tflops,
                     154.0 / p->tflops);
        else {
            char a[32], b[32];
            snprintf(row, sizeof row, "  %-20s %s %s", p->name, teach_cell(a, sizeof a, "—", 12),
                     teach_cell(b, sizeof b, "—", 9));
        }
        CHECK_MSG(strstr(stored, row) != NULL, "no row '%s'", row);
    }
    char *t6 = strdup(exec_capture(&s, "profile table6 stored"));
    CHECK_STR_CONTAINS(t6, "profile table6: NOT MEASURED HERE (profile table6 stored)");
    CHECK_STR_CONTAINS(t6, "ted d=4096");
    CHECK_STR_CONTAINS(t6, "(oos)");
    if (kern_device_count() > 0) {
        free(stored);
        free(t6);
        t_skip("skipped: a CUDA device is present (the no-GPU path is not taken)");
    }
    err_clear();
    const char *live = exec_capture(&s, "ablate");
    CHECK_EQ_INT(s.failed, 0);
    CHECK(strncmp(live, "ablate: NOT MEASURED HERE (", 27) == 0);
    CHECK(same_after_first_line(live, stored));
    CHECK(!s.have_ds); /* nothing generated */
    live = exec_capture(&s, "profile table6");
    CHECK_EQ_INT(s.failed, 0);
    CHECK(strncmp(live, "profile table6: NOT MEASURED HERE (", 35) == 0);
    CHECK(same_after_first_line(live, t6));
    free(stored);
    free(t6);
}

TEST(explain_numbers_and_errors)
{
    session s;
    new_session(&s);
    const char *o = exec_capture(&s, "explain warp-tile");
    CHECK_STR_CONTAINS(o, "warp-tile: warp tile (register blocking)\n");
    CHECK_STR_CONTAINS(o, "  paper     4.05x  (A100: 38.0 of 154 TFLOPS, warp tile off;");
    /* The measured figure is the embedded doc's row (no session log). */
    for (int k = 0; k < teach_bench_doc.nrows; k++)
        if (strcmp(teach_bench_doc.rows[k].name, "warp-tile") == 0) {
            char want[64];
            snprintf(want, sizeof want,
                     "  measured  %.2fx  (docs/BENCHMARKS.md: ", teach_bench_doc.rows[k].slowdown);
            CHECK_STR_CONTAINS(o, want);
        }
    o = exec_capture(&s, "explain async-copy");
    CHECK_STR_CONTAINS(o, "  paper     —      ((memcpy_async alone: not in the paper))");
    CHECK_STR_CONTAINS(o, "  paper     3.17x  (with the pipeline: 48.6 TFLOPS;");
    o = exec_capture(&s, "explain swizzle foo");
    CHECK(strcmp(o, "error: Usage: explain [NAME [sass]]\n") == 0);
    o = exec_capture(&s, "explain swizzle sass");
    CHECK_STR_CONTAINS(o, "swizzle: swizzled shared-memory layout\n");
    if (teach_sass_counts.status[0])
        CHECK_STR_CONTAINS(o, teach_sass_counts.status);
    else
        CHECK_STR_CONTAINS(o, "no-swizzle against all-on");
}

TEST(paper_table5_figures)
{
    /* The figures, as given. */
    const char *names[] = {"order",    "smem-buffer", "async-copy+pipeline",
                           "pipeline", "residency",   "warp-tile",
                           "swizzle",  "align"};
    const double tfl[] = {133.1, 95.8, 48.6, 145.0, 110.8, 38.0, 120.8, 120.7};
    for (int k = 0; k < 8; k++) {
        const paper_t5_row *p = paper_t5_find(names[k]);
        CHECK_MSG(p && p->tflops == tfl[k], "%s", names[k]);
        CHECK_NEAR(paper_t5_slowdown(p), 154.0 / tfl[k], 1e-12);
    }
    /* Every row names switches of src/fasted_opts.c; a combination's bits
     * are its parts'. */
    for (const paper_t5_row *p = paper_t5; p->name; p++)
        CHECK_MSG(teach_off_bits(p->name) != 0, "%s", p->name);
    CHECK_EQ_INT(teach_off_bits("async-copy+pipeline"),
                 fasted_switch_find("async-copy")->bit | fasted_switch_find("pipeline")->bit);
    CHECK_EQ_INT(teach_off_bits("swizzle+nosuch"), 0);
}
