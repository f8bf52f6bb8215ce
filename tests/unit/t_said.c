/* What the program says: refusals, headers and wording, checked against
 * what a person typed and what the machine is.
 * Test plan:
 * - forms: each form of a command takes only its options (dbscan curve
 *   out=, dbscan compare out=, dbscan max=, ladder list n=, ablate stored
 *   eps=), and an option given twice is refused, each with one line that
 *   lists what the form takes; a plain command keeps its usage line;
 * - run out= in count mode is refused (a count writes no file);
 * - dbscan compare says what it compared (dataset, eps, minpts, A, B);
 * - set threads beyond the cores is accepted and says the cores
 *   (sysconf, asked here);
 * - help engines without a GPU gives the no-GPU reason once;
 * - counts that refuse 0 never say "non-negative";
 * - ladder diff puts a change's removed lines before its added ones;
 * - the JSON writer escapes C1 controls (U+009B, CSI) in strings;
 * - a message with a long path keeps its reason;
 * - the F9 panel is titled clusters while it shows them; the selectivity
 *   plot names its y axis. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cmd.h"
#include "err.h"
#include "json.h"
#include "kernels.h"
#include "ladder.h"
#include "out.h"
#include "panels.h"
#include "plot.h"
#include "settings.h"
#include "session_capture.h"

static void end_session(session *s)
{
    if (s->have_ds)
        dataset_free(&s->ds);
}

TEST(each_form_takes_only_its_options)
{
    session s;
    new_session(&s);
    exec_capture(&s, "gen uniform n=200 d=2 seed=1; eps 0.1");
    CHECK(s.have_ds && s.have_eps);
    struct {
        const char *line, *want;
    } c[] = {
        {"dbscan curve out=/dev/null",
         "error: dbscan curve: unknown option 'out'; dbscan curve takes minpts= max= engine=\n"},
        {"dbscan compare cpu cpu-fp16 out=/dev/null",
         "error: dbscan compare: unknown option 'out'; dbscan compare takes minpts=\n"},
        {"dbscan max=3",
         "error: dbscan: unknown option 'max'; dbscan takes minpts= engine= out=\n"},
        {"dbscan minpts=3 minpts=4", "error: dbscan: minpts= given twice; give it once\n"},
        {"dbscan curve minpts=3 max=0.2 minpts=4",
         "error: dbscan curve: minpts= given twice; give it once\n"},
        {"ladder list n=4",
         "error: ladder list: unknown option 'n'; ladder list takes no options\n"},
        {"ablate stored eps=1",
         "error: ablate stored: unknown option 'eps'; ablate stored takes no options\n"},
        {"ablate current n=5",
         "error: ablate current: unknown option 'n'; ablate current takes eps=\n"},
        {"run cpu mode=count mode=pairs", "error: run: mode= given twice; give it once\n"},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        const char *got = exec_capture(&s, c[k].line);
        CHECK_MSG(strcmp(got, c[k].want) == 0, "%s: got \"%s\"", c[k].line, got);
    }
    /* A command of one form keeps its usage line. */
    CHECK_STR_CONTAINS(exec_capture(&s, "run cpu bogus=1"),
                       "error: run: unknown option 'bogus'; Usage: run [ENGINE]");
    /* The forms still run with their own options. */
    CHECK_STR_CONTAINS(exec_capture(&s, "dbscan minpts=3"), ": eps 0.1, minpts 3 on uniform");
    end_session(&s);
}

TEST(run_out_in_count_mode_is_refused)
{
    session s;
    new_session(&s);
    exec_capture(&s, "gen uniform n=200 d=2 seed=1; eps 0.1");
    const char *path = t_path("count.out");
    char line[512];
    snprintf(line, sizeof line, "run cpu out=%s", path);
    CHECK(strcmp(exec_capture(&s, line), "error: out= needs mode=pairs or mode=perpoint (count "
                                         "mode writes no file)\n") == 0);
    CHECK(access(path, F_OK) != 0);
    snprintf(line, sizeof line, "run cpu mode=perpoint out=%s", path);
    CHECK_STR_CONTAINS(exec_capture(&s, line), ": cpu on uniform-n200-d2-s1");
    CHECK(access(path, F_OK) == 0);
    end_session(&s);
}

TEST(dbscan_compare_says_what_it_compared)
{
    session s;
    new_session(&s);
    exec_capture(&s, "gen uniform n=200 d=2 seed=1; eps 0.125");
    CHECK_STR_CONTAINS(exec_capture(&s, "dbscan compare cpu cpu-fp16 minpts=4"),
                       "dbscan compare: eps 0.125, minpts 4 on uniform-n200-d2-s1 (n=200 d=2), "
                       "A cpu, B cpu-fp16\n  A: cpu ");
    end_session(&s);
}

TEST(threads_beyond_the_cores_say_so)
{
    session s;
    new_session(&s);
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char want[160], line[64];
    snprintf(line, sizeof line, "set threads %ld", cores + 1);
    snprintf(want, sizeof want,
             "threads %ld\n  note: this machine has %ld cores; the %ld threads "
             "share them\n",
             cores + 1, cores, cores + 1);
    const char *got = exec_capture(&s, line);
    CHECK_MSG(strncmp(got, want, strlen(want)) == 0, "got \"%s\"", got);
    CHECK_EQ_INT(s.eopt.threads, (int)cores + 1);
    snprintf(line, sizeof line, "set threads %ld", cores);
    snprintf(want, sizeof want, "threads %ld\n{", cores);
    CHECK(strncmp(exec_capture(&s, line), want, strlen(want)) == 0);
}

TEST(engines_give_the_no_gpu_reason_once)
{
    if (kern_device_count() > 0)
        t_skip("a CUDA device is present");
    session s;
    new_session(&s);
    const char *text = exec_capture(&s, "help engines");
    int times = 0, gpu_rows = 0;
    /* in the text, not the JSON record (which gives each engine's why) */
    for (const char *p = text; (p = strstr(p, "needs an NVIDIA GPU")) != NULL; p++) {
        const char *bol = p;
        while (bol > text && bol[-1] != '\n')
            bol--;
        times += *bol != '{';
    }
    for (const engine *const *e = engine_table; *e; e++)
        gpu_rows += (*e)->gpu;
    CHECK(gpu_rows > 1);
    CHECK_MSG(times == 1, "the reason %d times for %d GPU engines", times, gpu_rows);
    char head[64];
    snprintf(head, sizeof head, "not available (%d engines: ", gpu_rows);
    CHECK_STR_CONTAINS(text, head);
}

TEST(counts_that_refuse_zero_do_not_say_non_negative)
{
    session s;
    new_session(&s);
    exec_capture(&s, "gen uniform n=200 d=2 seed=1; eps 0.1");
    const char *lines[] = {"kdist abc",         "kdist 0",      "history abc",
                           "history 0",         "show run 0",   "run cpu minpts=-1",
                           "run cpu minpts=0",  "curve bins=0", "dbscan minpts=abc",
                           "profile table6 n=1"};
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++) {
        const char *got = exec_capture(&s, lines[k]);
        CHECK_MSG(strncmp(got, "error: ", 7) == 0 && !strstr(got, "non-negative"), "%s: %s",
                  lines[k], got);
    }
    CHECK_STR_CONTAINS(exec_capture(&s, "kdist 0"),
                       "error: kdist: K: expected an integer from 1 to ");
    CHECK(strcmp(exec_capture(&s, "run cpu minpts=-1"),
                 "error: minpts (it counts the point itself): expected an integer of at least 1, "
                 "got '-1'\n") == 0);
    end_session(&s);
}

static void collect(void *ctx, const char *line)
{
    char *b = ctx;
    strcat(b, line);
    strcat(b, "\n");
}

TEST(ladder_diff_removes_before_it_adds)
{
    char got[1024] = "";
    const char *a = "keep\nold 1\nold 2\nkeep too\n", *b = "keep\nnew 1\nnew 2\nkeep too\n";
    CHECK_EQ_INT(ladder_diff(a, b, "a", "b", collect, got), 4);
    CHECK_MSG(strcmp(got, "--- a\n+++ b\n@@ -1,4 +1,4 @@\n keep\n-old 1\n-old 2\n+new 1\n+new "
                          "2\n keep too\n") == 0,
              "got:\n%s", got);
}

TEST(json_escapes_c1_controls)
{
    json_w w;
    json_w_init(&w, '{');
    json_w_str(&w, "s",
               "a\xc2\x9b"
               "31mb\xc2\x80\xc2\xa0");
    char *t = json_w_finish(&w);
    /* CSI and U+0080 escaped; U+00A0 (no control) kept as UTF-8. */
    CHECK_MSG(strcmp(t, "{\"s\":\"a\\u009b31mb\\u0080\xc2\xa0\"}") == 0, "got %s", t);
    free(t);
}

TEST(long_path_messages_keep_their_reason)
{
    char path[6001];
    memset(path, 'd', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    err_set(TCJ_EIO, "%s: No such file or directory", path);
    const char *m = err_msg();
    const char *tail = ": No such file or directory";
    CHECK(strlen(m) > strlen(tail) && strcmp(m + strlen(m) - strlen(tail), tail) == 0);
    CHECK(strncmp(m, "/ddd", 4) == 0);
    /* Longer than the buffer: the head and the reason, the middle cut. */
    size_t n = 30000;
    char *big = malloc(n + 1);
    memset(big, 'e', n);
    big[n] = '\0';
    err_set(TCJ_EIO, "%s: Permission denied", big);
    m = err_msg();
    CHECK(strstr(m, " ... ") != NULL);
    CHECK(strcmp(m + strlen(m) - strlen(": Permission denied"), ": Permission denied") == 0);
    free(big);
}

TEST(kdist_panel_is_titled_by_what_it_shows)
{
    ui_view *v = calloc(1, sizeof *v);
    ui_view_init(v);
    CHECK(strcmp(ui_panel_kdist_title(v), "k-distance") == 0);
    v->clu_newer = 1;
    CHECK(strcmp(ui_panel_kdist_title(v), "clusters") == 0);
    ui_view_free(v);
    free(v);
}

TEST(curve_plot_names_its_y_axis)
{
    double x[] = {0, 1, 2, 5, 10}, y[] = {0, 10, 20, 50, 100};
    char cells[24 * 8], row[25];
    ui_grid g;
    ui_grid_init(&g, cells, 24, 8);
    CHECK_EQ_INT(ui_plot_curve(&g, x, y, 5, NULL, NULL, 0, 0, 1), 0);
    CHECK_EQ_INT(ui_plot_ylabel(&g, "S"), 0);
    ui_grid_row(&g, 0, row);
    CHECK_MSG(strncmp(row, "100|S ", 6) == 0, "top row \"%s\"", row);
    ui_grid_row(&g, 7, row);
    CHECK(strncmp(row, "    0", 5) == 0); /* x from 0, where the header's curve starts */
    /* Where the curve passes, the label gives way. */
    double fy[] = {100, 10};
    double fx[] = {0, 10};
    ui_grid_init(&g, cells, 24, 8);
    CHECK_EQ_INT(ui_plot_curve(&g, fx, fy, 2, NULL, NULL, 0, 0, 0), 0);
    CHECK_EQ_INT(ui_plot_ylabel(&g, "S"), -1);
}
