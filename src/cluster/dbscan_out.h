/* A DBSCAN result as output: its text, its JSON members and its labels
 * file. The one writer of each, shared by `dbscan` as it finishes and by
 * `show dbscan` / `export dbscan` reading the session log, so a stored
 * result reads as the live one did. */
#ifndef TCJ_DBSCAN_OUT_H
#define TCJ_DBSCAN_OUT_H

#include <stdint.h>

#include "dbscan.h"
#include "dbscan_advice.h"
#include "json.h"

struct ofile;

/* What a DBSCAN run is shown with; the strings are the caller's. */
typedef struct dbscan_view {
    int64_t id; /* dbscan_id in the log, 0: not stored */
    const char *engine, *precision, *dataset;
    const char *labels_path; /* NULL: no labels written */
    size_t d;
    double eps;
    size_t minpts;
    int64_t run_id[DBSCAN_NPASS]; /* the runs its passes made (0: none) */
    const dbscan_result *res;     /* counts, sizes, seconds (pass[] unused here) */
} dbscan_view;

/* The summary, the largest clusters, time by pass and the red flags. */
void dbscan_print(const dbscan_view *v);
/* The members of the "dbscan" record (docs/JSON.md) into an open object. */
void dbscan_json(json_w *w, const dbscan_view *v);
/* The "dbscan" record. */
void dbscan_record(const dbscan_view *v);
/* Two clusterings side by side and their comparison, text and the
 * "dbscan_compare" record. */
void dbscan_compare_print(const dbscan_view *a, const dbscan_view *b, const dbscan_cmp *c);
/* Labels to an open output file by path's extension: .npy (int32 '<i4',
 * shape (n,)), .csv (header "label", one per line), else raw int32 in the
 * host's byte order. Commits (or aborts on error) of. */
int dbscan_write_labels(struct ofile *of, const char *path, const int32_t *labels, size_t n);
/* The same for any clustering's column: int32 (f64 0) or float64 values
 * (.npy '<f8', .csv with 17 significant digits, else raw), the .csv
 * header name. */
int cluster_write_column(struct ofile *of, const char *path, const void *v, size_t n, int f64,
                         const char *name);

#endif
