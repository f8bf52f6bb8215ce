/* ablate at the paper's setting on a GPU (d = 4096, generated uniform data,
 * symmetric off, COUNT; a smaller |D| to keep it fast): every row runs and
 * is stored with the variant it names, every mma.sync variant finds the
 * all-on pair set, and explain then reads its slowdown from the session
 * log. The expected rows come from the switch table (src/fasted_opts.c) and
 * the kernels' variant names, not from ablate itself. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "err.h"
#include "fasted_opts.h"
#include "kernels.h"
#include "out.h"
#include "settings.h"
#include "store.h"
#include "teach.h"

#define N_TEST 3000

typedef struct stored_runs {
    int n;
    char variant[24][96];
    char options[24][512];
    int status[24];
    long long nn[24], d[24];
} stored_runs;

static int collect(void *ctx, int ncol, const char *const *names, const char *const *v)
{
    (void)names;
    stored_runs *r = ctx;
    if (ncol < 5 || r->n >= 24)
        return 0;
    snprintf(r->variant[r->n], 96, "%s", v[0] ? v[0] : "");
    r->status[r->n] = v[1] ? atoi(v[1]) : -1;
    r->nn[r->n] = v[2] ? atoll(v[2]) : 0;
    r->d[r->n] = v[3] ? atoll(v[3]) : 0;
    snprintf(r->options[r->n], 512, "%s", v[4] ? v[4] : "");
    r->n++;
    return 0;
}

/* A stored run of the variant: runs store "VARIANT, symmetric on|off". */
static int stored_has(const stored_runs *r, const char *variant)
{
    const size_t len = strlen(variant);
    for (int k = 0; k < r->n; k++)
        if (strncmp(r->variant[k], variant, len) == 0 &&
            (r->variant[k][len] == '\0' || r->variant[k][len] == ','))
            return 1;
    return 0;
}

TEST(ablate_paper_setting_stores_every_row)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
    char path[] = "/tmp/tcj-gablate-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    unlink(path);
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    s.batch = 1;
    CHECK_EQ_INT(store_open(path, &s.db), 0);
    s.session_id = store_session_begin(s.db, "g_ablate", "test", 0);

    static out_buf b;
    out_set_sink(out_buf_sink, &b);
    char line[64];
    snprintf(line, sizeof line, "ablate n=%d", N_TEST);
    int rc = cmd_exec(&s, line);
    out_reset_sink();
    const char *o = b.data ? b.data : "";
    printf("%s", o);
    CHECK_MSG(rc == 0, "ablate: %s", err_msg());
    CHECK_STR_CONTAINS(o, "the paper's setting");
    CHECK(s.have_ds && s.ds.n == N_TEST && s.ds.d == 4096);

    stored_runs r;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(store_query(s.db,
                             "SELECT variant, status, n, d, options FROM runs WHERE command_id = "
                             "(SELECT MAX(id) FROM commands WHERE line LIKE 'ablate%') "
                             "ORDER BY id",
                             NULL, 0, collect, &r),
                 0);
    /* mma.sync all-on, each switch but wgmma, the combination when the
     * kernels have it, and the Hopper default. */
    int want = 1;
    CHECK(stored_has(&r, kern_fasted_variant_name(teach_off_bits("wgmma"))));
    for (const fasted_switch *w = fasted_switches; w->name; w++) {
        if (strcmp(w->name, "wgmma") == 0)
            continue;
        want++;
        CHECK_MSG(stored_has(&r, kern_fasted_variant_name(w->bit)), "no stored run of %s",
                  kern_fasted_variant_name(w->bit));
    }
    const char *both = kern_fasted_variant_name(teach_off_bits("async-copy+pipeline"));
    if (teach_variant_compiled(both)) {
        want++;
        CHECK_MSG(stored_has(&r, both), "no stored run of %s", both);
    } else {
        CHECK_STR_CONTAINS(o, "not compiled in this build");
    }
    want++; /* the Hopper kernel (or all-on mma.sync below compute 9.0) */
    CHECK_EQ_INT(r.n, want);
    for (int k = 0; k < r.n; k++) {
        CHECK_MSG(r.status[k] == 0, "run of %s failed", r.variant[k]);
        CHECK(r.nn[k] == N_TEST && r.d[k] == 4096);
        CHECK_MSG(strstr(r.options[k], "symmetric=off") != NULL, "options %s", r.options[k]);
    }
    /* Same pair set in every mma.sync variant: no "NO" in that column. */
    CHECK_MSG(strstr(o, " NO\n") == NULL, "a variant's pair set differs from all-on's");
    CHECK_STR_CONTAINS(o, "ranked by slowdown, measured here");

    /* explain now reads the measured slowdown from this ablate. */
    out_buf_free(&b);
    out_set_sink(out_buf_sink, &b);
    cmd_exec(&s, "explain swizzle");
    out_reset_sink();
    CHECK_STR_CONTAINS(b.data ? b.data : "", "(latest ablate in the session log: ");
    out_buf_free(&b);
    store_close(s.db);
    dataset_free(&s.ds);
    unlink(path);
}

static int count_row(void *ctx, int ncol, const char *const *names, const char *const *v)
{
    (void)ncol;
    (void)names;
    int *k = ctx;
    *k = v[0] ? atoi(v[0]) : -1;
    return 0;
}

TEST(profile_table6_runs_and_stores_six_columns)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
    char path[] = "/tmp/tcj-gt6-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    unlink(path);
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    s.batch = 1;
    CHECK_EQ_INT(store_open(path, &s.db), 0);
    s.session_id = store_session_begin(s.db, "g_ablate", "test", 0);
    static out_buf b;
    out_set_sink(out_buf_sink, &b);
    int rc = cmd_exec(&s, "profile table6 n=2048");
    out_reset_sink();
    const char *o = b.data ? b.data : "";
    printf("%s", o);
    CHECK_MSG(rc == 0, "profile table6: %s", err_msg());
    CHECK_STR_CONTAINS(o, "profile table6: uniform n=2048, symmetric off");
    /* fasted and ted at d = 128, 256, 4096: six runs, each ok. */
    int k = -1;
    CHECK_EQ_INT(store_query(s.db,
                             "SELECT COUNT(*) FROM runs WHERE status = 0 AND n = 2048 AND "
                             "engine IN ('fasted', 'ted') AND d IN (128, 256, 4096)",
                             NULL, 0, count_row, &k),
                 0);
    CHECK_EQ_INT(k, 6);
    out_buf_free(&b);
    store_close(s.db);
    dataset_free(&s.ds);
    unlink(path);
}
