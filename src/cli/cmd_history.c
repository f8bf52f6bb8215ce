/* history, runs, show, export: reading the session log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbscan_out.h"
#include "err.h"
#include "lab_out.h"
#include "ofile.h"
#include "out.h"
#include "out_table.h"
#include "perpoint_out.h"
#include "store.h"

static int need_db(session *s)
{
    if (!s->db)
        return err_set(TCJ_ESTORE, "no session log (the database could not be opened)");
    return 0;
}

static int parse_limit(int argc, char **argv, int def, int *out)
{
    *out = def;
    if (argc == 0)
        return 0;
    size_t n;
    int rc = cmd_parse_count(argv[0], "N", 1, 1000000, &n);
    if (rc)
        return rc;
    *out = (int)n;
    return 0;
}

/* history and runs: the last N (default 20) commands or runs as a table. */
static int list_last(session *s, int argc, char **argv, int runs)
{
    int rc, n;
    if ((rc = need_db(s)) || (rc = parse_limit(argc, argv, 20, &n)))
        return rc;
    out_table t;
    out_table_init(&t, runs ? "runs" : "history");
    /* History stops before this command: its own line is not history yet. */
    rc = runs ? store_runs(s->db, n, out_table_row, &t)
              : store_history(s->db, n, s->command_id, out_table_row, &t);
    out_table_flush(&t);
    return rc;
}

static int history_run(session *s, int argc, char **argv)
{
    return list_last(s, argc, argv, 0);
}

const cmd cmd_history = {
    .name = "history",
    .usage = "history [N]",
    .summary = "the last N command lines of the session log",
    .help = "List the last N (default 20) command lines kept in the session log, from\n"
            "every session, with their status and time.",
    .min_args = 0,
    .max_args = 1,
    .options = NULL,
    .run = history_run,
};

static int runs_run(session *s, int argc, char **argv)
{
    return list_last(s, argc, argv, 1);
}

const cmd cmd_runs = {
    .name = "runs",
    .usage = "runs [N]",
    .summary = "the last N runs of the session log",
    .help = "List the last N (default 20) runs: engine, dataset, eps, pairs, selectivity,\n"
            "time, TFLOPS and status. show run ID gives everything about one.",
    .min_args = 0,
    .max_args = 1,
    .options = NULL,
    .run = runs_run,
};

static int parse_id(const char *w, const char *what, int64_t *out)
{
    size_t v;
    int rc = cmd_parse_count(w, what, 1, SIZE_MAX, &v);
    if (rc)
        return rc;
    *out = (int64_t)v;
    return 0;
}

/* One row of show run as text: each section (run, phase, counter,
 * comparison, side, bin) has its own columns and gives a few lines. */
static int show_row(void *ctx, int ncol, const char *const *names, const char *const *values)
{
    int *rows = ctx;
    (*rows)++;
    const char *sec = ncol > 0 && values[0] ? values[0] : "";

    if (!strcmp(sec, "run")) {
        for (int c = 1; c < ncol; c++)
            if (values[c] && *values[c])
                out_printf("%-16s %s\n", names[c], values[c]);
    } else if (!strcmp(sec, "bin")) {
        /* Bins holding no pair say nothing. */
        if (ncol >= 6 && values[5] && strcmp(values[5], "0") != 0)
            out_printf("%-16s comparison %s side %s [%s, %s) %s\n", "bin", values[1],
                       ncol >= 7 && values[6] ? values[6] : "a", values[3], values[4], values[5]);
    } else {
        out_printf("%-16s", sec);
        for (int c = 1; c < ncol; c++)
            if (values[c] && *values[c]) {
                if (!strcmp(sec, "comparison"))
                    out_printf(" %s=%s", names[c], values[c]);
                else
                    out_printf(" %s", values[c]);
            }
        out_printf("\n");
    }
    return 0;
}

/* show compare ID: every stored value labelled name=value in text, and
 * the same as one "show" record (the comparison, its sides, its bins). */
typedef struct show_cmp {
    out_rec *r;
    const char *open; /* the section whose array is open in r, or NULL */
    int rows;
} show_cmp;

static int show_cmp_row(void *ctx, int ncol, const char *const *names, const char *const *values)
{
    show_cmp *sc = ctx;
    sc->rows++;
    const char *sec = ncol > 0 && values[0] ? values[0] : "";
    int bin = !strcmp(sec, "bin"), side = !strcmp(sec, "side");
    if (bin && (ncol < 6 || !values[5] || !strcmp(values[5], "0")))
        return 0; /* bins holding no pair say nothing */
    const char *arr = bin ? "bins" : side ? "sides" : NULL;
    if (sc->open && (!arr || strcmp(sc->open, arr) != 0)) {
        out_rec_close(sc->r);
        sc->open = NULL;
    }
    if (arr && !sc->open) {
        out_rec_arr(sc->r, arr);
        sc->open = arr;
    }
    out_rec_obj(sc->r, arr ? NULL : sec);
    if (bin)
        out_printf("%-10s side %s [%s, %s) %s\n", "bin", ncol >= 7 && values[6] ? values[6] : "a",
                   values[3], values[4], values[5]);
    else
        out_printf("%-10s", sec);
    for (int c = 1; c < ncol; c++) {
        /* the comparison's id on every side and bin row says nothing new */
        if ((bin || side) && !strcmp(names[c], "comparison_id"))
            continue;
        if (values[c] && *values[c] && !bin)
            out_printf(" %s=%s", names[c], values[c]);
        if (values[c])
            out_rec_text_value(sc->r, names[c], values[c]);
        else
            out_rec_null(sc->r, names[c]);
    }
    if (!bin)
        out_printf("\n");
    out_rec_close(sc->r);
    return 0;
}

/* show lab ID: the table and records precisions printed, read back. */
static int show_lab(session *s, const char *word)
{
    int rc;
    int64_t id = 0;
    if ((rc = need_db(s)) || (rc = parse_id(word, "lab id", &id)))
        return rc;
    lab_result *r = xmalloc(sizeof *r);
    rc = store_lab_get(s->db, id, r);
    if (!rc) {
        lab_print(r);
        lab_records(r);
    }
    free(r);
    return rc;
}

/* show dbscan ID: the summary dbscan printed, read back, and its record. */
static int show_dbscan(session *s, const char *word)
{
    int rc;
    int64_t id = 0;
    if ((rc = need_db(s)) || (rc = parse_id(word, "dbscan id", &id)))
        return rc;
    store_dbscan_row *r = xmalloc(sizeof *r);
    rc = store_dbscan_get(s->db, id, r);
    if (!rc) {
        dbscan_print(&r->view);
        dbscan_record(&r->view);
    }
    free(r);
    return rc;
}

/* The stored record of type TYPE with "TYPE_id" after "type" (the form
 * the command emitted): malloc'd. */
static char *record_with_id(const char *type, int64_t id, const char *json)
{
    char head[160];
    snprintf(head, sizeof head, "{\"type\":\"%s\"", type);
    const size_t hl = strlen(head);
    if (strncmp(json, head, hl) != 0)
        return xstrdup(json);
    char idm[96];
    snprintf(idm, sizeof idm, ",\"%s_id\":%lld", type, (long long)id);
    char *out = xmalloc(strlen(json) + strlen(idm) + 1);
    memcpy(out, json, hl);
    strcpy(out + hl, idm);
    strcat(out, json + hl);
    return out;
}

/* show TYPE ID for a type a command keeps as its record (cmd.h's
 * `stored`): the record, as the command emitted it. */
static int show_record(session *s, const char *type, const char *word)
{
    int rc;
    int64_t id = 0;
    char what[80];
    snprintf(what, sizeof what, "%s id", type);
    if ((rc = need_db(s)) || (rc = parse_id(word, what, &id)))
        return rc;
    char *json;
    if ((rc = store_record_get(s->db, type, id, &json)))
        return rc;
    char *rec = record_with_id(type, id, json);
    out_printf("%s %lld: %s\n", type, (long long)id, rec);
    out_rec_raw(rec);
    free(rec);
    free(json);
    return 0;
}

static int show_run(session *s, int argc, char **argv)
{
    int rc;
    if (argc == 2 && cmd_stored_type(argv[0]))
        return show_record(s, argv[0], argv[1]);
    int cmp = strcmp(argv[0], "compare") == 0;
    if (strcmp(argv[0], "lab") == 0 && argc == 2)
        return show_lab(s, argv[1]);
    if (strcmp(argv[0], "dbscan") == 0 && argc == 2)
        return show_dbscan(s, argv[1]);
    if ((strcmp(argv[0], "run") != 0 && !cmp) || argc != 2)
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("show")->usage);
    int64_t id = 0;
    if ((rc = need_db(s)) || (rc = parse_id(argv[1], cmp ? "compare id" : "run id", &id)))
        return rc;
    int rows = 0;
    if (cmp) {
        show_cmp sc = {out_rec_begin("show"), NULL, 0};
        out_rec_str(sc.r, "what", "compare");
        rc = store_show_compare(s->db, id, show_cmp_row, &sc);
        if (sc.open)
            out_rec_close(sc.r);
        if (rc) {
            out_rec_discard(sc.r); /* the error line alone, no half record */
            return rc;
        }
        out_rec_end(sc.r);
        return 0;
    }
    rc = store_show_run(s->db, id, show_row, &rows);
    if (!rc && rows == 0)
        return err_set(TCJ_EINVAL, "no run %lld in the session log", (long long)id);
    if (rc)
        return rc;
    /* A perpoint run: the summary as the run printed it when it finished. */
    perpoint_summary *pp = xmalloc(sizeof *pp);
    int found;
    rc = store_perpoint_find(s->db, id, pp, &found);
    if (!rc && found)
        perpoint_print(pp);
    free(pp);
    if (rc)
        return rc;
    /* The record is the run's export object: the same names and typed
     * numbers as export and the run record (the summary included). */
    out_rec *r = out_rec_begin("show");
    rc = store_run_json(s->db, id, out_rec_json(r));
    out_rec_end(r);
    return rc;
}

const cmd cmd_show = {
    .name = "show",
    .usage = "show run ID|compare ID|lab ID|dbscan ID|hdbscan ID|hdbscan_compare ID",
    .summary = "everything stored about one run, comparison, precision lab or clustering",
    .help = "Show one run of the session log: engine, dataset (and dtype, the element type\n"
            "its values were kept in: u8, f16, f32 or f64), eps, options, device,\n"
            "pairs, selectivity, phases, TFLOPS, counters and status; for a run made\n"
            "with mode=perpoint also its summary as run printed it (neighbours per\n"
            "point, their histogram, and with minpts=M the core points). show compare\n"
            "ID shows one comparison (the number compare printed): its engines, runs,\n"
            "dataset, eps, overlap, distance errors and histogram bins. show lab ID\n"
            "prints the table and sentence of one precision lab (the number precisions\n"
            "printed) again, from its stored runs and comparisons. show dbscan ID prints\n"
            "one clustering's summary (counts, largest clusters, time by pass, the runs\n"
            "its passes made, red flags) as dbscan printed it. show hdbscan ID and show\n"
            "hdbscan_compare ID print the record hdbscan (hdbscan compare) emitted.",
    .min_args = 2,
    .max_args = 2,
    .options = NULL,
    .run = show_run,
};

/* export TYPE ID json FILE for a type a command keeps as its record: the
 * record as the command emitted it, one line. */
static int export_record(session *s, int argc, char **argv, int force)
{
    int rc;
    int64_t id = 0;
    char what[80];
    snprintf(what, sizeof what, "%s id", argv[0]);
    if ((rc = parse_id(argv[1], what, &id)))
        return rc;
    if (strcmp(argv[2], "json") != 0)
        return err_set(TCJ_EINVAL, "export %s: only json (the record), got '%s'", argv[0], argv[2]);
    char *json;
    if ((rc = need_db(s)) || (rc = store_record_get(s->db, argv[0], id, &json)))
        return rc;
    char *rec = record_with_id(argv[0], id, json);
    free(json);
    ofile *of;
    if ((rc = ofile_open(argv[3], force, store_path(s->db), &of))) {
        free(rec);
        return rc;
    }
    FILE *f = ofile_stream(of);
    if (!f || fprintf(f, "%s\n", rec) < 0) {
        free(rec);
        rc = ofile_failure(of, TCJ_EIO);
        ofile_abort(of);
        return rc;
    }
    free(rec);
    if ((rc = ofile_commit(of)))
        return rc;
    out_printf("exported %s %lld to %s\n", argv[0], (long long)id, argv[3]);
    out_rec *r = out_rec_begin("export");
    char key[96];
    snprintf(key, sizeof key, "%s_id", argv[0]);
    out_rec_int(r, key, id);
    out_rec_str(r, "format", "json");
    out_rec_str(r, "file", argv[3]);
    out_rec_end(r);
    return 0;
}

static int export_run(session *s, int argc, char **argv)
{
    int rc;
    int64_t id = -1;
    int k;
    int force = cmd_take_flag(&argc, argv, "force");
    if (argc == 4 && cmd_stored_type(argv[0]))
        return export_record(s, argc, argv, force);
    if (argc >= 1 && strcmp(argv[0], "runs") == 0 && argc == 3) {
        k = 1;
    } else if (argc >= 1 &&
               (strcmp(argv[0], "run") == 0 || strcmp(argv[0], "kdist") == 0 ||
                strcmp(argv[0], "lab") == 0 || strcmp(argv[0], "dbscan") == 0 ||
                strcmp(argv[0], "ladder") == 0) &&
               argc == 4) {
        char what[16];
        snprintf(what, sizeof what, "%s id", argv[0]);
        if ((rc = parse_id(argv[1], what, &id)))
            return rc;
        k = 2;
    } else {
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("export")->usage);
    }
    if (strcmp(argv[k], "csv") && strcmp(argv[k], "json"))
        return err_set(TCJ_EINVAL, "export: format must be csv or json, got '%s'", argv[k]);
    if ((rc = need_db(s)))
        return rc;
    /* The log writes into the output file's stream (never reopened by
     * name); it is renamed into place only when the export is complete. */
    ofile *of;
    if ((rc = ofile_open(argv[k + 1], force, store_path(s->db), &of)))
        return rc;
    int kd = argv[0][0] == 'k', lab = !strcmp(argv[0], "lab"), db = argv[0][0] == 'd',
        ld = !strcmp(argv[0], "ladder");
    FILE *f = ofile_stream(of);
    const char *name = argv[k + 1];
    if (!f || (rc = kd    ? store_kdist_export_f(s->db, id, argv[k], f, name)
                    : lab ? store_lab_export_f(s->db, id, argv[k], f, name)
                    : db  ? store_dbscan_export_f(s->db, id, argv[k], f, name)
                    : ld  ? store_ladder_export_f(s->db, id, argv[k], f, name)
                          : store_export_f(s->db, id, argv[k], f, name))) {
        rc = ofile_failure(of, rc ? rc : TCJ_EIO);
        ofile_abort(of);
        return rc;
    }
    if ((rc = ofile_commit(of)))
        return rc;
    out_printf("exported %s to %s\n", id < 0 ? "runs" : argv[0], argv[k + 1]);
    out_rec *r = out_rec_begin("export");
    if (id < 0)
        out_rec_null(r, "run_id"); /* every run */
    else
        out_rec_int(r,
                    kd    ? "kdist_id"
                    : lab ? "lab_id"
                    : db  ? "dbscan_id"
                    : ld  ? "ladder_id"
                          : "run_id",
                    id);
    out_rec_str(r, "format", argv[k]);
    out_rec_str(r, "file", argv[k + 1]);
    out_rec_end(r);
    return 0;
}

const cmd cmd_export = {
    .name = "export",
    .usage = "export runs|run ID|kdist ID|lab ID|dbscan ID|ladder ID|hdbscan ID|hdbscan_compare ID "
             "csv|json FILE [force]",
    .summary = "write runs of the session log to a file",
    .help = "Write every run (export runs csv FILE) or one run (export run 3 json FILE) of\n"
            "the session log to FILE as CSV (one line per run, with a header) or JSON.\n"
            "An existing FILE is kept unless force is given; the session log itself is\n"
            "never written. The file appears complete or not at all.\n"
            "export kdist ID csv|json FILE writes a k-distance curve (see kdist): CSV one\n"
            "line per stored point, JSON one object with a points array.\n"
            "export lab ID csv|json FILE writes a precision lab (see precisions): CSV one\n"
            "line per format with the lab's columns first, JSON one object with a formats\n"
            "array.\n"
            "export dbscan ID csv|json FILE writes a clustering (see dbscan): CSV one line\n"
            "per cluster-size bin with the clustering's columns first, JSON the dbscan\n"
            "record's object. Labels are never stored: dbscan out=FILE writes them.\n"
            "export ladder ID csv|json FILE writes a teaching ladder (see ladder): CSV one\n"
            "line per rung with the ladder's columns first, JSON the ladder record's object.\n"
            "export hdbscan ID json FILE (hdbscan_compare likewise) writes the record\n"
            "hdbscan emitted, one line; json only.",
    .min_args = 3,
    .max_args = 5,
    .options = NULL,
    .run = export_run,
};
