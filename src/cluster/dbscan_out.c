/* DBSCAN results as text, JSON and label files (src/cluster/dbscan_out.h). */
#include <stdio.h>
#include <string.h>

#include "dbscan_out.h"
#include "err.h"
#include "ofile.h"
#include "out.h"

static double pct(size_t k, size_t n)
{
    return n ? 100.0 * (double)k / (double)n : 0;
}

void dbscan_print(const dbscan_view *v)
{
    const dbscan_result *r = v->res;
    char eps[40];
    out_fmt_double(eps, sizeof eps, v->eps);
    out_printf("dbscan %lld: eps %s, minpts %zu on %s (n=%zu d=%zu), engine %s (%s), in %.3f s\n",
               (long long)v->id, eps, v->minpts, v->dataset ? v->dataset : "?", r->n, v->d,
               v->engine, v->precision ? v->precision : "?", r->seconds);
    out_printf("  clusters %zu, core %zu (%.1f%%), border %zu (%.1f%%), noise %zu (%.1f%%)\n",
               r->clusters, r->core, pct(r->core, r->n), r->border, pct(r->border, r->n), r->noise,
               pct(r->noise, r->n));
    if (r->ntop) {
        char line[256];
        size_t len = 0;
        for (size_t k = 0; k < r->ntop && len < sizeof line; k++)
            len +=
                (size_t)snprintf(line + len, sizeof line - len, "%s%zu", k ? " " : "", r->top[k]);
        out_printf("  largest clusters (points, border included): %s%s\n", line,
                   r->clusters > r->ntop ? " ..." : "");
        out_printf("  largest holds %.1f%% of the points\n", pct(r->top[0], r->n));
    }
    out_printf("  passes:");
    for (int k = 0; k < DBSCAN_NPASS; k++) {
        out_printf(" %s %.4f s", dbscan_pass_names[k], r->pass_seconds[k]);
        if (v->run_id[k])
            out_printf(" (run %lld)", (long long)v->run_id[k]);
        else if (!r->ran[k] && k > 0)
            out_printf(" (no join needed)");
        out_printf(k + 1 < DBSCAN_NPASS ? "," : "\n");
    }
    const double dc = join_result_metric_value(&r->pass[DBSCAN_PASS_CORE], "dense_cells"),
                 dr = join_result_metric_value(&r->pass[DBSCAN_PASS_CORE], "dense_rows");
    if (dc > 0)
        out_printf(
            "  dense cells: %.0f grid sub-cells of %zu rows or more hold %.0f rows (%.1f%%), "
            "core without a distance\n",
            dc, v->minpts, dr, r->n ? 100 * dr / (double)r->n : 0);
    if (v->labels_path)
        out_printf("  labels (int32, -1 noise) written to %s\n", v->labels_path);
    unsigned f = dbscan_flags(r);
    for (int k = 0; k < DBSCAN_NFLAGS; k++)
        if (f & (1u << k)) {
            char t[320];
            dbscan_flag_text(k, r, v->minpts, v->d, t, sizeof t);
            out_printf("  red flag: %s\n", t);
        }
}

void dbscan_json(json_w *w, const dbscan_view *v)
{
    const dbscan_result *r = v->res;
    json_w_int(w, "dbscan_id", v->id);
    json_w_str(w, "engine", v->engine);
    json_w_str(w, "precision", v->precision);
    json_w_str(w, "dataset", v->dataset);
    json_w_uint(w, "n", r->n);
    json_w_uint(w, "d", v->d);
    json_w_dbl(w, "eps", v->eps);
    json_w_uint(w, "minpts", v->minpts);
    json_w_uint(w, "clusters", r->clusters);
    json_w_uint(w, "core", r->core);
    json_w_uint(w, "border", r->border);
    json_w_uint(w, "noise", r->noise);
    json_w_arr(w, "largest");
    for (size_t k = 0; k < r->ntop; k++)
        json_w_uint(w, NULL, r->top[k]);
    json_w_close(w);
    json_w_arr(w, "sizes");
    for (int b = 0; b < DBSCAN_SIZE_BINS; b++)
        if (r->size_hist[b]) {
            json_w_obj(w, NULL);
            json_w_uint(w, "lo", (uint64_t)1 << b);
            json_w_uint(w, "hi", (uint64_t)1 << (b + 1));
            json_w_uint(w, "clusters", r->size_hist[b]);
            json_w_close(w);
        }
    json_w_close(w);
    json_w_dbl(w, "time_s", r->seconds);
    json_w_obj(w, "passes");
    for (int k = 0; k < DBSCAN_NPASS; k++) {
        json_w_obj(w, dbscan_pass_names[k]);
        json_w_dbl(w, "time_s", r->pass_seconds[k]);
        if (v->run_id[k])
            json_w_int(w, "run_id", v->run_id[k]);
        else
            json_w_null(w, "run_id");
        json_w_close(w);
    }
    json_w_close(w);
    const double dc = join_result_metric_value(&r->pass[DBSCAN_PASS_CORE], "dense_cells");
    if (dc > 0) {
        json_w_uint(w, "dense_cells", (uint64_t)dc);
        json_w_uint(w, "dense_rows",
                    (uint64_t)join_result_metric_value(&r->pass[DBSCAN_PASS_CORE], "dense_rows"));
    }
    json_w_arr(w, "flags");
    unsigned f = dbscan_flags(r);
    for (int k = 0; k < DBSCAN_NFLAGS; k++)
        if (f & (1u << k))
            json_w_str(w, NULL, dbscan_flag_names[k]);
    json_w_close(w);
    json_w_str(w, "labels", v->labels_path);
}

void dbscan_record(const dbscan_view *v)
{
    out_rec *r = out_rec_begin("dbscan");
    dbscan_json(out_rec_json(r), v);
    out_rec_end(r);
}

void dbscan_compare_print(const dbscan_view *a, const dbscan_view *b, const dbscan_cmp *c)
{
    for (int k = 0; k < 2; k++) {
        const dbscan_view *v = k ? b : a;
        const dbscan_result *r = v->res;
        out_printf("  %c: %-12s dbscan %lld: clusters %zu, core %zu, border %zu, noise %zu, "
                   "%.3f s\n",
                   k ? 'B' : 'A', v->engine, (long long)v->id, r->clusters, r->core, r->border,
                   r->noise, r->seconds);
    }
    out_printf("  adjusted Rand index %.6f; %zu points (%.2f%%) change label after matching "
               "clusters\n",
               c->ari, c->changed, pct(c->changed, c->n));
    out_printf("  noise: %zu gained, %zu lost; core: %zu gained, %zu lost (B against A)\n",
               c->noise_gained, c->noise_lost, c->core_gained, c->core_lost);
    out_rec *r = out_rec_begin("dbscan_compare");
    json_w *w = out_rec_json(r);
    json_w_dbl(w, "eps", a->eps);
    json_w_uint(w, "minpts", a->minpts);
    json_w_uint(w, "n", c->n);
    for (int k = 0; k < 2; k++) {
        json_w_obj(w, k ? "b" : "a");
        dbscan_json(w, k ? b : a);
        json_w_close(w);
    }
    json_w_dbl(w, "ari", c->ari);
    json_w_uint(w, "changed", c->changed);
    json_w_uint(w, "noise_gained", c->noise_gained);
    json_w_uint(w, "noise_lost", c->noise_lost);
    json_w_uint(w, "core_gained", c->core_gained);
    json_w_uint(w, "core_lost", c->core_lost);
    out_rec_end(r);
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

int cluster_write_column(ofile *of, const char *path, const void *v, size_t n, int f64,
                         const char *name)
{
    int rc = 0;
    if (ends_with(path, ".csv")) {
        FILE *f = ofile_stream(of);
        if (!f) {
            ofile_abort(of);
            return TCJ_EIO;
        }
        fprintf(f, "%s\n", name);
        for (size_t i = 0; i < n; i++)
            if (f64)
                fprintf(f, "%.17g\n", ((const double *)v)[i]);
            else
                fprintf(f, "%d\n", ((const int32_t *)v)[i]);
        return ofile_commit(of);
    }
    if (ends_with(path, ".npy")) {
        /* NPY 1.0: magic, version, header length, a dict padded with
         * spaces and a newline so the data start at a multiple of 64. */
        const uint16_t one = 1;
        char dict[128];
        int len = snprintf(dict, sizeof dict,
                           "{'descr': '%c%s', 'fortran_order': False, 'shape': (%zu,), }",
                           *(const char *)&one ? '<' : '>', f64 ? "f8" : "i4", n);
        size_t hl = 10 + (size_t)len + 1;
        size_t pad = (64 - hl % 64) % 64;
        unsigned char head[256];
        memcpy(head, "\x93NUMPY\x01\x00", 8);
        size_t hlen = (size_t)len + pad + 1;
        head[8] = (unsigned char)(hlen & 0xff);
        head[9] = (unsigned char)(hlen >> 8);
        memcpy(head + 10, dict, (size_t)len);
        memset(head + 10 + len, ' ', pad);
        head[10 + len + pad] = '\n';
        rc = ofile_write(of, head, 10 + hlen);
    }
    if (!rc)
        rc = ofile_write(of, v, n * (f64 ? sizeof(double) : sizeof(int32_t)));
    if (rc) {
        ofile_abort(of);
        return rc;
    }
    return ofile_commit(of);
}

int dbscan_write_labels(ofile *of, const char *path, const int32_t *labels, size_t n)
{
    return cluster_write_column(of, path, labels, n, 0, "label");
}
