/* Command parsing, option checking, error texts, help, the man page check,
 * completion and the JSON writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "check.h"
#include "devices.h"
#include "cmd.h"
#include "complete.h"
#include "engine.h"
#include "err.h"
#include "kernels.h"
#include "lab.h"
#include "out.h"
#include "settings.h"
#include "store.h"
#include "session_capture.h"

static int split(const char *line, char ***argv, char **st)
{
    return cmd_split(line, argv, st);
}

TEST(split_words_quotes_escapes)
{
    char **av, *st;
    int n = split("  load 'my file.csv'  \"a \\\"b\\\" \\\\c\" x\\ y \"\" ", &av, &st);
    CHECK_EQ_INT(n, 5);
    CHECK(strcmp(av[0], "load") == 0);
    CHECK(strcmp(av[1], "my file.csv") == 0);
    CHECK(strcmp(av[2], "a \"b\" \\c") == 0);
    CHECK(strcmp(av[3], "x y") == 0);
    CHECK(strcmp(av[4], "") == 0);
    CHECK(av[5] == NULL);
    free(st);
}

TEST(split_tilde_is_home)
{
    char **av, *st;
    setenv("HOME", "/home/someone", 1);
    int n = split("load ~/a.csv out=~/b ~ '~/c' x~ ~user a=b=~/d", &av, &st);
    CHECK_EQ_INT(n, 8);
    CHECK(strcmp(av[1], "/home/someone/a.csv") == 0);
    CHECK(strcmp(av[2], "out=/home/someone/b") == 0);
    CHECK(strcmp(av[3], "/home/someone") == 0);
    CHECK(strcmp(av[4], "~/c") == 0); /* quoted: as written */
    CHECK(strcmp(av[5], "x~") == 0);
    CHECK(strcmp(av[6], "~user") == 0); /* other users' homes are not looked up */
    CHECK(strcmp(av[7], "a=b=~/d") == 0);
    free(st);
}

TEST(split_comments)
{
    char **av, *st;
    int n = split("run cpu # the exact one", &av, &st);
    CHECK_EQ_INT(n, 2);
    free(st);
    n = split("load a#b.csv", &av, &st);
    CHECK_EQ_INT(n, 2);
    CHECK(strcmp(av[1], "a#b.csv") == 0);
    free(st);
    n = split("   # only a comment", &av, &st);
    CHECK_EQ_INT(n, 0);
    free(st);
    n = split("", &av, &st);
    CHECK_EQ_INT(n, 0);
    free(st);
}

TEST(split_errors)
{
    char **av, *st;
    CHECK_EQ_INT(split("load 'abc", &av, &st), TCJ_EINVAL);
    CHECK(strcmp(err_msg(), "unterminated ' quote") == 0);
    CHECK_EQ_INT(split("load \"abc", &av, &st), TCJ_EINVAL);
    CHECK(strcmp(err_msg(), "unterminated \" quote") == 0);
    CHECK_EQ_INT(split("load abc\\", &av, &st), TCJ_EINVAL);
    CHECK(strcmp(err_msg(), "backslash at the end of the line") == 0);
}

TEST(split_commands)
{
    char **cv, *st;
    int n = cmd_split_commands("gen uniform; eps 0.1;run cpu", &cv, &st);
    CHECK_EQ_INT(n, 3);
    CHECK(strcmp(cv[0], "gen uniform") == 0);
    CHECK(strcmp(cv[1], " eps 0.1") == 0);
    CHECK(strcmp(cv[2], "run cpu") == 0);
    free(st);
    /* ';' inside quotes or escaped stays; a comment runs to the end of its line. */
    n = cmd_split_commands("load 'a;b' x\\;y # c; d\neps 1", &cv, &st);
    CHECK_EQ_INT(n, 2);
    CHECK(strcmp(cv[0], "load 'a;b' x\\;y ") == 0);
    CHECK(strcmp(cv[1], "eps 1") == 0);
    free(st);
    n = cmd_split_commands(";;;;", &cv, &st);
    CHECK_EQ_INT(n, 5);
    CHECK(cv[5] == NULL);
    free(st);
    n = cmd_split_commands("a#b; c", &cv, &st);
    CHECK_EQ_INT(n, 2);
    CHECK(strcmp(cv[0], "a#b") == 0);
    free(st);
}

TEST(options)
{
    char *argv[] = {"cpu", "mode=pairs", "out=/tmp/x=y", "./a=b", NULL};
    CHECK(strcmp(cmd_opt(4, argv, "mode"), "pairs") == 0);
    CHECK(strcmp(cmd_opt(4, argv, "out"), "/tmp/x=y") == 0);
    CHECK(cmd_opt(4, argv, "format") == NULL);
    CHECK(cmd_opt(4, argv, "mod") == NULL);
    CHECK(cmd_is_opt("rows=1:2"));
    CHECK(!cmd_is_opt("./a=b"));
    CHECK(!cmd_is_opt("=x"));
    char *pos[4];
    CHECK_EQ_INT(cmd_positional(4, argv, pos, 4), 2);
    CHECK(strcmp(pos[1], "./a=b") == 0);

    const cmd *run = cmd_find("run");
    CHECK(run != NULL);
    CHECK_EQ_INT(cmd_check_opts(run, 4, argv), 0);
    char *bad[] = {"cpu", "mod=pairs", NULL};
    CHECK_EQ_INT(cmd_check_opts(run, 2, bad), TCJ_EINVAL);
    char want[512];
    /* The unknown key is named before the usage line. */
    snprintf(want, sizeof want, "run: unknown option 'mod'; Usage: %s", run->usage);
    CHECK(strcmp(err_msg(), want) == 0);
}

TEST(parse_numbers)
{
    double d;
    size_t z;
    CHECK_EQ_INT(cmd_parse_double("0.25", "eps", &d), 0);
    CHECK(d == 0.25);
    CHECK_EQ_INT(cmd_parse_double("abc", "sigma", &d), TCJ_EINVAL);
    CHECK(strcmp(err_msg(), "sigma: expected a number, got 'abc'") == 0);
    CHECK_EQ_INT(cmd_parse_double("1.5x", "sigma", &d), TCJ_EINVAL);
    CHECK_EQ_INT(cmd_parse_double("nan", "sigma", &d), TCJ_EINVAL);
    CHECK_EQ_INT(cmd_parse_size("20000", "n", &z), 0);
    CHECK_EQ_INT(z, 20000);
    CHECK_EQ_INT(cmd_parse_size("1e5", "n", &z), 0);
    CHECK_EQ_INT(z, 100000);
    CHECK_EQ_INT(cmd_parse_size("-3", "n", &z), TCJ_EINVAL);
    CHECK(strcmp(err_msg(), "n: expected a non-negative integer, got '-3'") == 0);
    CHECK_EQ_INT(cmd_parse_size("2.5", "n", &z), TCJ_EINVAL);
    CHECK_EQ_INT(cmd_parse_size("", "n", &z), TCJ_EINVAL);
    CHECK_EQ_INT(cmd_parse_size("12abc", "n", &z), TCJ_EINVAL);
    /* The sizes docs/DATASETS.md promises: k = 1e3, M = 1e6, G = 1e9. */
    CHECK_EQ_INT(cmd_parse_size("100k", "n", &z), 0);
    CHECK_EQ_INT(z, 100000);
    CHECK_EQ_INT(cmd_parse_size("2M", "n", &z), 0);
    CHECK_EQ_INT(z, 2000000);
    CHECK_EQ_INT(cmd_parse_size("1.5k", "n", &z), 0);
    CHECK_EQ_INT(z, 1500);
    CHECK_EQ_INT(cmd_parse_size("1G", "n", &z), 0);
    CHECK(z == 1000000000u);
    CHECK_EQ_INT(cmd_parse_size("1.0005k", "n", &z), TCJ_EINVAL); /* 1000.5 points */
    CHECK_EQ_INT(cmd_parse_size("k", "n", &z), TCJ_EINVAL);
    CHECK_EQ_INT(cmd_parse_size("2MM", "n", &z), TCJ_EINVAL);
    CHECK_EQ_INT(cmd_parse_size("2m", "n", &z), TCJ_EINVAL);
}

TEST(exec_errors_exact)
{
    session s;
    new_session(&s);
    CHECK(strcmp(exec_capture(&s, "foo 1"), "error: unknown command 'foo' (try help)\n") == 0);
    CHECK_EQ_INT(s.failed, 1);
    CHECK(strcmp(exec_capture(&s, "eps abc"),
                 "error: eps: expected a positive number, got 'abc'\n") == 0);
    CHECK(strcmp(exec_capture(&s, "eps -0.5"),
                 "error: eps: expected a positive number, got '-0.5'\n") == 0);
    CHECK(strcmp(exec_capture(&s, "eps 1 2"), "error: Usage: eps [VALUE]\n") == 0);
    CHECK(strcmp(exec_capture(&s, "show run"),
                 "error: Usage: show run ID|compare ID|lab ID|dbscan ID|hdbscan ID|"
                 "hdbscan_compare ID\n") == 0);
    CHECK(strcmp(exec_capture(&s, "run cpu"), "error: no dataset loaded (use load or gen)\n") == 0);
    /* The buffer sink holds text and records alike. */
    CHECK_STR_CONTAINS(exec_capture(&s, "run nosuch"),
                       "error: unknown engine 'nosuch' (one of: cpu ");
    /* A typo (one or two edits) names the engine meant; a word far from
     * every engine name gets none. */
    CHECK_STR_CONTAINS(exec_capture(&s, "run fastd"),
                       "error: unknown engine 'fastd'; did you mean fasted? (one of: cpu ");
    CHECK_STR_CONTAINS(exec_capture(&s, "run cpu-fp61"), "did you mean cpu-fp16?");
    CHECK(strstr(exec_capture(&s, "run nosuch"), "did you mean") == NULL);
    /* Commands get the same: a typo names the command meant. */
    CHECK(strcmp(exec_capture(&s, "compre cpu-fp16 cpu"),
                 "error: unknown command 'compre'; did you mean compare? (try help)\n") == 0);
    CHECK_STR_CONTAINS(exec_capture(&s, "kdsit 4"), "did you mean kdist?");
    CHECK(strstr(exec_capture(&s, "foo 1"), "did you mean") == NULL);
    CHECK_STR_CONTAINS(exec_capture(&s, "load x.csv format=nosuch"),
                       "error: format: unknown format 'nosuch' (one of: ");
    CHECK(strcmp(exec_capture(&s, "eps 0.5; eps"),
                 "eps 0.5\n{\"type\":\"eps\",\"eps\":0.5}\neps 0.5\n") == 0);
    CHECK(s.have_eps && s.eps == 0.5);
}

TEST(exec_set)
{
    session s;
    new_session(&s);
    CHECK(strcmp(exec_capture(&s, "set threads 1"),
                 "threads 1\n{\"type\":\"set\",\"name\":\"threads\",\"value\":1}\n") == 0);
    CHECK_EQ_INT(s.eopt.threads, 1);
    exec_capture(&s, "set symmetric off; set opt swizzle off; set ted paper; set index-k 4");
    CHECK_EQ_INT(s.eopt.symmetric, 0);
    CHECK_EQ_INT(s.eopt.ted_paper, 1);
    CHECK_EQ_INT(s.eopt.index_k, 4);
    CHECK(s.eopt.fasted_off == (1u << 6));
    exec_capture(&s, "set mode pairs; set format csv; set out /tmp/x.csv");
    CHECK_EQ_INT(s.mode, JOIN_PAIRS);
    CHECK(strcmp(s.out_format, "csv") == 0);
    CHECK(strcmp(s.out_path, "/tmp/x.csv") == 0);
    CHECK(strcmp(exec_capture(&s, "set mode all"),
                 "error: mode: expected count, perpoint or pairs, got 'all'\n") == 0);
    CHECK(strcmp(exec_capture(&s, "set opt swizzle"), "error: Usage: set opt NAME|all on|off\n") ==
          0);
    /* One switch off at a time: the second is refused now, not at the run. */
    CHECK(strcmp(exec_capture(&s, "set opt align off"),
                 "error: opt: swizzle is already off and only one switch can be off at a time; "
                 "set opt swizzle on (or set opt all on) first\n") == 0);
    CHECK(s.eopt.fasted_off == (1u << 6));
    exec_capture(&s, "set opt all on");
    CHECK(s.eopt.fasted_off == 0);
    exec_capture(&s, "set opt align off");
    CHECK(s.eopt.fasted_off == (1u << 7));
    CHECK_STR_CONTAINS(exec_capture(&s, "set opt all off"), "error: opt: only one switch");
    CHECK(s.eopt.fasted_off == (1u << 7));
    exec_capture(&s, "set opt align on");
    CHECK(s.eopt.fasted_off == 0);
    CHECK_EQ_INT(s.mode, JOIN_PAIRS);
}

/* Without an NVIDIA driver a GPU engine says what is missing and names
 * itself, not the CUDA runtime's "driver version is insufficient". */
TEST(no_driver_message)
{
    if (access("/proc/driver/nvidia/version", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0 ||
        access("/dev/dxg", F_OK) == 0)
        t_skip("an NVIDIA driver is loaded here");
    session s;
    new_session(&s);
    exec_capture(&s, "gen uniform n=50 d=3 seed=1; eps 0.5");
    /* A build without CUDA adds why it has none (kernels/stub.c), after. */
    const char *want = kern_built_with_cuda()
                           ? "error: fasted needs an NVIDIA GPU; none found (no driver loaded)\n"
                           : "error: fasted needs an NVIDIA GPU; none found (no driver loaded); "
                             "this tcjoin ";
    CHECK(strncmp(exec_capture(&s, "run fasted"), want, strlen(want)) == 0);
    CHECK_STR_CONTAINS(exec_capture(&s, "run ted"),
                       "error: ted needs an NVIDIA GPU; none found (no driver loaded)");
    CHECK_STR_CONTAINS(exec_capture(&s, "engines"),
                       "): needs an NVIDIA GPU; none found (no driver loaded)");
    if (!kern_built_with_cuda() && access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
        CHECK(strstr(exec_capture(&s, "run fasted"), "nvcc not found") == NULL);
    if (s.have_ds)
        dataset_free(&s.ds);
}

/* One wording for a cancellation: "NAME: cancelled", never a bare one. */
TEST(cancel_wording)
{
    char b[128];
    CHECK(strcmp(cmd_cancel_text("sweep 64 use", "cancelled", b, sizeof b), "sweep: cancelled") ==
          0);
    CHECK(strcmp(cmd_cancel_text("kdist 4", "cancelled", b, sizeof b), "kdist: cancelled") == 0);
    CHECK(strcmp(cmd_cancel_text("run cpu", "run cpu: cancelled", b, sizeof b),
                 "run cpu: cancelled") == 0);
}

/* help engines: every row's precision column starts where the others'
 * do, names longer than 10 characters (cpu-fp8-e4m3) included. */
TEST(engines_rows_align)
{
    session s;
    new_session(&s);
    char *text = strdup(exec_capture(&s, "engines"));
    int col = -1, rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        const char *d2 = strstr(line, " d2 ");
        if (strncmp(line, "  ", 2) != 0 || line[2] == ' ' || !d2)
            continue;
        int at = (int)(d2 - line);
        if (col < 0)
            col = at;
        CHECK_MSG(at == col, "engine row's d2 at column %d, the first row's at %d: %s", at, col,
                  line);
        rows++;
    }
    CHECK(rows >= 10);
    free(text);
}

/* profile over a `set devices` list profiles each listed device in turn,
 * but only a GPU engine: a CPU engine runs once, with no device in its
 * record and the reason its counters are N/A. (The per-device runs need a
 * GPU: tests/gpu/g_devices.c.) */
TEST(profile_cpu_engine_ignores_device_list)
{
    session s;
    new_session(&s);
    exec_capture(&s, "gen uniform n=200 d=4 seed=1; eps 0.3; set devices 0,1");
    CHECK(devices_listed(&s.eopt));
    const char *out = exec_capture(&s, "profile cpu");
    CHECK_EQ_INT(s.failed, 0);
    CHECK(strstr(out, "over set devices") == NULL);
    CHECK(strstr(out, "device 0:") == NULL);
    CHECK_STR_CONTAINS(out, "counters: N/A: cpu runs on the CPU: no GPU kernel to count");
    const char *rec = strstr(out, "{\"type\":\"profile\"");
    CHECK(rec != NULL);
    if (rec) {
        CHECK(strstr(rec + 1, "{\"type\":\"profile\"") == NULL); /* one record */
        CHECK(strstr(rec, "\"device\":") == NULL);
        CHECK_STR_CONTAINS(rec, "\"engine\":\"cpu\"");
    }
    if (s.have_ds)
        dataset_free(&s.ds);
}

static int first_cell(void *ctx, int ncol, const char *const *names, const char *const *vals)
{
    char *out = ctx;
    size_t k = strlen(out);
    snprintf(out + k, 256 - k, "%s%s", k ? "|" : "", ncol > 0 && vals[0] ? vals[0] : "NULL");
    return 0;
}

/* curve's points are stored: a sweeps row of kind curve, one step per
 * point, at the eps and S the command printed. */
TEST(curve_is_stored)
{
    session s;
    new_session(&s);
    char path[512];
    snprintf(path, sizeof path, "%s/curve.db", t_tmpdir());
    CHECK_EQ_INT(store_open(path, &s.db), 0);
    s.session_id = store_session_begin(s.db, "t_cmd", "test", "host");
    char *out = exec_capture(&s, "gen uniform n=300 d=3 seed=1; curve 0.1 0.5 bins=4 engine=cpu");
    CHECK_STR_CONTAINS(out, "stored as sweep 1 (kind curve)");
    CHECK_STR_CONTAINS(out, "\"type\":\"curve\",\"sweep_id\":1,");
    char got[256] = "";
    store_query(s.db, "SELECT kind || ' ' || engine || ' ' || passes FROM sweeps", NULL, 0,
                first_cell, got);
    CHECK(strcmp(got, "curve cpu 1") == 0);
    got[0] = '\0';
    store_query(s.db, "SELECT printf('%g %d', eps, step) FROM sweep_steps ORDER BY step", NULL, 0,
                first_cell, got);
    CHECK(strcmp(got, "0.1 0|0.2 1|0.3 2|0.4 3|0.5 4") == 0);
    /* The pairs stored at a point equal a direct run at that eps. */
    got[0] = '\0';
    store_query(s.db, "SELECT pairs FROM sweep_steps WHERE step = 2", NULL, 0, first_cell, got);
    char *run = exec_capture(&s, "eps 0.3; run cpu");
    char want[64];
    snprintf(want, sizeof want, "\"pairs\":%s,", got);
    CHECK_MSG(strstr(run, want) != NULL, "curve S %s vs run: %s", got, run);
    store_close(s.db);
    if (s.have_ds)
        dataset_free(&s.ds);
}

TEST(help_matches_table)
{
    session s;
    new_session(&s);
    for (const cmd *const *c = cmd_table; *c; c++) {
        char line[128], want[8192];
        snprintf(line, sizeof line, "help %s", (*c)->name);
        snprintf(want, sizeof want, "Usage: %s\n%s\n", (*c)->usage, (*c)->help);
        CHECK_MSG(strncmp(exec_capture(&s, line), want, strlen(want)) == 0, "help %s", (*c)->name);
        CHECK_MSG(strncmp((*c)->usage, (*c)->name, strlen((*c)->name)) == 0,
                  "usage of %s starts with its name", (*c)->name);
    }
    char *all = exec_capture(&s, "help");
    for (const cmd *const *c = cmd_table; *c; c++)
        CHECK_STR_CONTAINS(all, (*c)->summary);
    /* Each command is listed under its group's heading, before the next,
     * its summary lined up after the longest name. */
    int width = 0;
    for (const cmd *const *c = cmd_table; *c; c++)
        if ((int)strlen((*c)->name) > width)
            width = (int)strlen((*c)->name);
    for (const cmd *const *c = cmd_table; *c; c++) {
        const char *const *g = cmd_group_names;
        while (*g && strcmp(*g, cmd_group(*c)) != 0)
            g++;
        CHECK_MSG(*g != NULL, "%s has a known group", (*c)->name);
        if (!*g)
            continue;
        char head[64], row[160];
        snprintf(head, sizeof head, "\n%s:\n", *g);
        snprintf(row, sizeof row, "\n  %-*s %s", width, (*c)->name, (*c)->summary);
        const char *h = strstr(all, head), *r = strstr(all, row);
        CHECK_MSG(h && r && h < r, "%s under %s", (*c)->name, *g);
        if (g[1] && h && r) {
            snprintf(head, sizeof head, "\n%s:\n", g[1]);
            const char *next = strstr(all, head);
            CHECK_MSG(next && r < next, "%s before group %s", (*c)->name, g[1]);
        }
    }
}

/* The man page as plain text: font escapes dropped, \- read as -. */
static char *man_text(void)
{
    FILE *f = fopen("man/tcjoin.1", "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *raw = malloc((size_t)n + 1);
    size_t got = fread(raw, 1, (size_t)n, f);
    raw[got] = '\0';
    fclose(f);
    char *out = malloc(got + 1), *w = out;
    for (char *p = raw; *p; p++) {
        if (p[0] == '\\' && p[1] == 'f' && p[2]) {
            p += 2;
            continue;
        }
        if (p[0] == '\\' && (p[1] == '-' || p[1] == '&' || p[1] == '\\' || p[1] == '.')) {
            if (p[1] != '&')
                *w++ = p[1];
            p++;
            continue;
        }
        *w++ = *p;
    }
    *w = '\0';
    free(raw);
    return out;
}

TEST(man_page_documents_everything)
{
    char *man = man_text();
    CHECK_MSG(man != NULL, "man/tcjoin.1 not readable (tests run from the repo root)");
    for (const cmd *const *c = cmd_table; *c; c++) {
        CHECK_MSG(strstr(man, (*c)->usage) != NULL, "man page lacks usage: %s", (*c)->usage);
        for (const char *const *o = (*c)->options; o && *o; o++) {
            char key[80];
            snprintf(key, sizeof key, "%s=", *o);
            CHECK_MSG(strstr(man, key) != NULL, "man page lacks option %s of %s", key, (*c)->name);
        }
    }
    for (const setting *t = settings_table; t->name; t++) {
        char line[128];
        snprintf(line, sizeof line, "set %s %s", t->name, t->usage);
        CHECK_MSG(strstr(man, line) != NULL, "man page lacks setting: %s", line);
    }
    for (const engine *const *e = engine_table; *e; e++) {
        char row[64];
        snprintf(row, sizeof row, ".B %s\n", (*e)->name);
        CHECK_MSG(strstr(man, row) != NULL, "man page lacks engine %s", (*e)->name);
    }
    /* The dashboard's keys (src/cli/dashboard.c dash_key and dash_poll). */
    const char *keys[] = {".SH DASHBOARD",
                          "Tab, Shift-Tab, F2 ... F10, F12",
                          "PgUp, PgDn",
                          "F11, z",
                          ".B Esc",
                          ".B Ctrl-C",
                          "typing during a run"};
    for (int k = 0; k < 7; k++)
        CHECK_MSG(strstr(man, keys[k]) != NULL, "man page lacks the dashboard key %s", keys[k]);
    /* The other way: every "set NAME" the man page names is a setting. */
    for (const char *p = man; (p = strstr(p, "set ")) != NULL; p += 4) {
        /* set in bold: ".B set NAME", ".BR \"set NAME ...\"" (prose says
         * "the set is" too) */
        int bold = (p - man >= 3 && !strncmp(p - 3, ".B ", 3)) ||
                   (p - man >= 5 && !strncmp(p - 5, ".BR \"", 5)) ||
                   (p - man >= 4 && !strncmp(p - 4, ".BR ", 4)) ||
                   (p - man >= 4 && !strncmp(p - 4, ".BI ", 4));
        if (!bold)
            continue;
        char name[32];
        if (sscanf(p + 4, "%31[a-z0-9-]", name) != 1 || !name[0])
            continue;
        CHECK_MSG(setting_find(name) != NULL,
                  "man page names a setting 'set %s' that does not exist", name);
    }
    const char *env[] = {"TCJOIN_DB", "TCJOIN_HISTORY", "XDG_DATA_HOME", "XDG_STATE_HOME"};
    for (int k = 0; k < 4; k++)
        CHECK_MSG(strstr(man, env[k]) != NULL, "man page lacks %s", env[k]);
    free(man);
}

/* Completion: all candidates as one space-separated string. */
static char *comp(const char *line, size_t *start)
{
    static char buf[8192];
    char **c;
    size_t st;
    complete_line(line, strlen(line), &c, &st);
    buf[0] = '\0';
    for (char **p = c; *p; p++) {
        strcat(buf, *p);
        if (p[1])
            strcat(buf, " ");
    }
    complete_free(c);
    if (start)
        *start = st;
    return buf;
}

TEST(completion)
{
    size_t st;
    CHECK(strcmp(comp("ru", &st), "run runs") == 0);
    CHECK_EQ_INT(st, 0);
    CHECK(strcmp(comp("eps 1; ru", &st), "run runs") == 0);
    CHECK_EQ_INT(st, 7);
    CHECK(
        strcmp(
            comp("run cp", &st),
            "cpu cpu-bf16 cpu-exact cpu-fp16 cpu-fp8-e4m3 cpu-fp8-e5m2 cpu-int8 cpu-tf32 cpu-ue4m4 "
            "cpu-ue5m3") == 0);
    CHECK_EQ_INT(st, 4);
    CHECK_STR_CONTAINS(comp("show ", NULL), "compare");
    CHECK_STR_CONTAINS(comp("show ", NULL), "lab");
    /* precisions: the formats of the table, the cpu flag, its options */
    const char *fmts[LAB_MAX_FORMATS];
    size_t nf = lab_format_names(fmts, LAB_MAX_FORMATS);
    char *pc = comp("precisions ", NULL);
    for (size_t k = 0; k < nf; k++)
        CHECK_STR_CONTAINS(pc, fmts[k]);
    CHECK_STR_CONTAINS(pc, "cpu");
    CHECK_STR_CONTAINS(pc, "min-overlap=");
    CHECK_STR_CONTAINS(comp("precisions ref=cpu-e", NULL), "ref=cpu-exact");
    CHECK(strcmp(comp("set opt al", NULL), "align all") == 0);
    CHECK(
        strcmp(comp("compare cpu-fp16 cpu-", NULL),
               "cpu-bf16 cpu-exact cpu-fp16 cpu-fp8-e4m3 cpu-fp8-e5m2 cpu-int8 cpu-tf32 cpu-ue4m4 "
               "cpu-ue5m3") == 0);
    CHECK(strcmp(comp("run cpu mo", NULL), "mode=") == 0);
    CHECK(strcmp(comp("run cpu mode=p", &st), "mode=pairs mode=perpoint") == 0);
    CHECK_EQ_INT(st, 8);
    CHECK(strcmp(comp("set mo", NULL), "mode") == 0);
    CHECK(strcmp(comp("set mode c", NULL), "count") == 0);
    CHECK(strcmp(comp("set opt sw", NULL), "swizzle") == 0);
    CHECK(strcmp(comp("set opt swizzle o", NULL), "off on") == 0);
    CHECK(strcmp(comp("gen u", NULL), "uniform") == 0);
    CHECK(strcmp(comp("help eng", NULL), "engines") == 0);
    CHECK(strcmp(comp("export runs c", NULL), "csv") == 0);
    CHECK(strcmp(comp("xyz a", NULL), "") == 0);
    if (cmd_find("sweep")) {
        CHECK(strcmp(
                  comp("sweep 64 engine=cpu", NULL),
                  "engine=cpu engine=cpu-bf16 engine=cpu-exact engine=cpu-fp16 engine=cpu-fp8-e4m3 "
                  "engine=cpu-fp8-e5m2 engine=cpu-int8 engine=cpu-tf32 "
                  "engine=cpu-ue4m4 engine=cpu-ue5m3") == 0);
        CHECK(strcmp(comp("sweep 64 method=b", NULL), "method=bisect") == 0);
    }

    /* Paths: directories end in '/', files match their prefix. */
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/cdir", t_tmpdir());
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/abc.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fclose(f);
    snprintf(path, sizeof path, "%s/abd", dir);
    mkdir(path, 0700);
    char line[700], want[1400];
    snprintf(line, sizeof line, "load %s/ab", dir);
    snprintf(want, sizeof want, "%s/abc.csv %s/abd/", dir, dir);
    CHECK(strcmp(comp(line, &st), want) == 0);
    CHECK_EQ_INT(st, 5);
    snprintf(line, sizeof line, "run cpu out=%s/abc", dir);
    snprintf(want, sizeof want, "out=%s/abc.csv", dir);
    CHECK(strcmp(comp(line, NULL), want) == 0);
}

TEST(json_records)
{
    out_buf b = {0};
    out_set_sink(out_buf_sink, &b);
    out_rec *r = out_rec_begin("t");
    out_rec_str(r, "s", "a\"b\\c\nd\te\x01");
    out_rec_int(r, "i", -42);
    out_rec_dbl(r, "x", 0.1);
    out_rec_dbl(r, "nan", NAN);
    out_rec_bool(r, "ok", 1);
    out_rec_str(r, "null", NULL);
    out_rec_obj(r, "phases");
    out_rec_dbl(r, "kernel", 1.5);
    out_rec_dbl(r, "d2h", 2);
    out_rec_close(r);
    out_rec_arr(r, "a");
    out_rec_int(r, NULL, 1);
    out_rec_obj(r, NULL);
    out_rec_int(r, "k", 2);
    out_rec_close(r);
    out_rec_end(r);
    out_printf("text %d\n", 7);
    out_error("bad\nsecond line dropped");
    out_reset_sink();
    CHECK(strcmp(b.data, "{\"type\":\"t\",\"s\":\"a\\\"b\\\\c\\nd\\te\\u0001\",\"i\":-42,"
                         "\"x\":0.1,\"nan\":null,\"ok\":true,\"null\":null,"
                         "\"phases\":{\"kernel\":1.5,\"d2h\":2},\"a\":[1,{\"k\":2}]}\n"
                         "text 7\nerror: bad\n") == 0);
    out_buf_free(&b);
}
