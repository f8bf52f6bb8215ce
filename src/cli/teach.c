#include "teach.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fasted_opts.h"
#include "kernels.h"
#include "out.h"
#include "paper_tables.h"
#include "store.h"

const char *teach_cell(char *buf, size_t size, const char *text, int width)
{
    int cols = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        cols += (*p & 0xc0) != 0x80; /* count code points, not bytes */
    int pad = width > cols ? width - cols : 0;
    snprintf(buf, size, "%*s%s", pad, "", text);
    return buf;
}

unsigned teach_off_bits(const char *names)
{
    unsigned off = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *save = NULL, *t = strtok_r(buf, "+", &save); t; t = strtok_r(NULL, "+", &save)) {
        const fasted_switch *w = fasted_switch_find(t);
        if (!w)
            return 0;
        off |= w->bit;
    }
    return off;
}

int teach_variant_compiled(const char *variant)
{
    return variant && strcmp(variant, "invalid") != 0 && strcmp(variant, "none") != 0;
}

/* The runs of the latest ablate command, as variant -> kernel seconds. */
typedef struct teach_ablate_rows {
    int n;
    char variant[24][96];
    double kernel_s[24];
    char device[128], at[40];
    long long nn, d;
} teach_ablate_rows;

static int teach_ablate_row(void *ctx, int ncol, const char *const *names, const char *const *v)
{
    (void)names;
    teach_ablate_rows *a = ctx;
    if (ncol < 6 || !v[0] || !v[1] || a->n >= 24)
        return 0;
    /* runs store "VARIANT, symmetric on|off": keep the variant */
    snprintf(a->variant[a->n], sizeof a->variant[0], "%.*s", (int)strcspn(v[0], ","), v[0]);
    a->kernel_s[a->n] = atof(v[1]);
    snprintf(a->device, sizeof a->device, "%s", v[2] ? v[2] : "?");
    snprintf(a->at, sizeof a->at, "%s", v[3] ? v[3] : "?");
    a->nn = v[4] ? atoll(v[4]) : 0;
    a->d = v[5] ? atoll(v[5]) : 0;
    a->n++;
    return 0;
}

static double teach_find(const teach_ablate_rows *a, const char *variant)
{
    for (int k = 0; k < a->n; k++)
        if (strcmp(a->variant[k], variant) == 0)
            return a->kernel_s[k];
    return 0;
}

/* The variant a switch name (or "a+b") runs: its off bits' kernel name. */
static const char *teach_variant_of(const char *name)
{
    unsigned off = teach_off_bits(name);
    return off ? kern_fasted_variant_name(off) : NULL;
}

int teach_slowdown(session *s, const teach_bench *doc, const char *name, double *slow, char *label,
                   size_t label_size)
{
    *slow = 0;
    label[0] = '\0';
    const char *variant = teach_variant_of(name);
    if (s && s->db && teach_variant_compiled(variant)) {
        static const char sql[] =
            "SELECT r.variant, r.kernel_seconds, r.device, c.at, r.n, r.d FROM runs r "
            "JOIN commands c ON c.id = r.command_id "
            "WHERE r.engine = 'fasted' AND r.status = 0 AND r.kernel_seconds > 0 "
            "AND r.command_id = (SELECT MAX(r2.command_id) FROM runs r2 "
            "JOIN commands c2 ON c2.id = r2.command_id WHERE r2.engine = 'fasted' "
            "AND r2.status = 0 AND LTRIM(c2.line) LIKE 'ablate%') ORDER BY r.id";
        teach_ablate_rows a;
        memset(&a, 0, sizeof a);
        if (store_query(s->db, sql, NULL, 0, teach_ablate_row, &a) == 0) {
            double base = teach_find(&a, kern_fasted_variant_name(teach_off_bits("wgmma")));
            double t = teach_find(&a, variant);
            if (base > 0 && t > 0) {
                *slow = t / base;
                snprintf(label, label_size,
                         "latest ablate in the session log: %s, %s, n=%lld d=%lld", a.device, a.at,
                         a.nn, a.d);
                return TEACH_SESSION;
            }
        }
        err_clear();
    }
    for (int k = 0; doc && k < doc->nrows; k++)
        if (strcmp(doc->rows[k].name, name) == 0 && doc->rows[k].slowdown > 0) {
            *slow = doc->rows[k].slowdown;
            snprintf(label, label_size, "docs/BENCHMARKS.md: %s", doc->label);
            return TEACH_DOC;
        }
    return TEACH_NONE;
}

int teach_print_excerpts(const teach_excerpts *t, const char *name, struct out_rec *r)
{
    int shown = 0;
    if (r)
        out_rec_arr(r, "excerpts");
    for (int k = 0; k < t->n; k++) {
        const teach_excerpt *e = &t->rows[k];
        if (strcmp(e->tag, name) != 0)
            continue;
        if (!shown)
            out_printf("kernel lines tagged [%s]:\n", name);
        out_printf("  %s:%d\n", e->file, e->line);
        if (r) {
            out_rec_obj(r, NULL);
            out_rec_str(r, "file", e->file);
            out_rec_int(r, "line", e->line);
            out_rec_str(r, "text", e->text);
            out_rec_close(r);
        }
        const char *p = e->text;
        while (*p) {
            const char *nl = strchr(p, '\n');
            int len = nl ? (int)(nl - p) : (int)strlen(p);
            out_printf("    | %.*s\n", len, p);
            p += len + (nl != NULL);
        }
        shown++;
    }
    if (r)
        out_rec_close(r);
    if (!shown)
        out_printf("kernel lines: not tagged yet (no /* [%s] */ in this build's kernel sources)\n",
                   name);
    return shown;
}

static const teach_sass_row *teach_sass_find(const teach_sass *t, const char *variant)
{
    for (int k = 0; k < t->n; k++)
        if (strcmp(t->rows[k].variant, variant) == 0)
            return &t->rows[k];
    return NULL;
}

static void teach_sass_rec(struct out_rec *r, const char *key, const teach_sass_row *v)
{
    out_rec_obj(r, key);
    out_rec_str(r, "variant", v->variant);
    out_rec_str(r, "function", v->function);
    out_rec_str(r, "arch", v->arch);
    out_rec_int(r, "HMMA", v->hmma);
    out_rec_int(r, "HGMMA", v->hgmma);
    out_rec_int(r, "LDSM", v->ldsm);
    out_rec_int(r, "LDGSTS", v->ldgsts);
    out_rec_int(r, "LDS", v->lds);
    out_rec_int(r, "STS", v->sts);
    out_rec_int(r, "UTMALDG", v->utmaldg);
    out_rec_int(r, "total", v->total);
    out_rec_close(r);
}

int teach_print_sass(const teach_sass *t, const char *variant, struct out_rec *r)
{
    if (t->status[0]) {
        out_printf("SASS counts: %s\n", t->status);
        return 0;
    }
    const teach_sass_row *base = teach_sass_find(t, "all-on");
    const teach_sass_row *v = teach_sass_find(t, variant);
    if (!v) {
        out_printf("SASS counts: no kernel named %s in this build's objects; it runs the all-on "
                   "kernel with other launch settings\n",
                   variant);
        v = base;
    }
    if (!base)
        return err_set(TCJ_EINVAL, "SASS counts: no all-on kernel in the table");
    out_printf("SASS of the count kernel (%s, cuobjdump at build time), %s against all-on:\n",
               v->arch, variant);
    out_printf("  %-9s %10s %12s %8s\n", "", "all-on", variant, "change");
    const char *names[] = {"HMMA", "HGMMA", "LDSM", "LDGSTS", "LDS", "STS", "UTMALDG", "total"};
    const int a[] = {base->hmma, base->hgmma, base->ldsm,    base->ldgsts,
                     base->lds,  base->sts,   base->utmaldg, base->total};
    const int b[] = {v->hmma, v->hgmma, v->ldsm, v->ldgsts, v->lds, v->sts, v->utmaldg, v->total};
    for (int k = 0; k < 8; k++)
        out_printf("  %-9s %10d %12d %+8d\n", names[k], a[k], b[k], b[k] - a[k]);
    if (r) {
        teach_sass_rec(r, "all_on", base);
        teach_sass_rec(r, "counts", v);
    }
    out_printf("  bank conflicts are not visible in SASS (same instructions, other addresses):\n"
               "  profile fasted with the switch off reads them (smem bank conflicts).\n");
    return 0;
}

void teach_print_stored_t5(const teach_bench *doc, const char *why)
{
    out_printf("ablate: NOT MEASURED HERE (%s); stored tables follow\n", why);
    out_printf("paper (FASTED, Table 5): A100, Synth |D|=1e5, d=4096, symmetric off, all on "
               "%.0f TFLOPS\n",
               PAPER_T5_ALL_ON);
    if (doc->nrows)
        out_printf("stored: docs/BENCHMARKS.md, %s\n", doc->label);
    else
        out_printf("stored: docs/BENCHMARKS.md has no leave-one-out table in this build\n");
    out_printf("  %-20s %12s %9s %14s %12s\n", "switch off", "paper TFLOPS", "paper",
               "stored TFLOPS", "stored");
    double base_tfl = 0;
    for (int k = 0; k < doc->nrows; k++)
        if (!doc->rows[k].name[0])
            base_tfl = doc->rows[k].tflops;
    char bt[16] = "—";
    if (base_tfl > 0)
        snprintf(bt, sizeof bt, "%.1f", base_tfl);
    char c3[32], c4[32];
    out_printf("  %-20s %12.1f %8.2fx %s %s\n", "(all on)", PAPER_T5_ALL_ON, 1.0,
               teach_cell(c3, sizeof c3, bt, 14),
               teach_cell(c4, sizeof c4, base_tfl > 0 ? "1.00x" : "—", 12));
    const char *names[16];
    double slow[16];
    int n = 0;
    out_rec *r = out_rec_begin("ablate");
    out_rec_bool(r, "measured_here", 0);
    out_rec_str(r, "why", why);
    out_rec_dbl(r, "paper_all_on_tflops", PAPER_T5_ALL_ON);
    out_rec_str(r, "stored_label", doc->nrows ? doc->label : NULL);
    out_rec_arr(r, "rows");
    for (const paper_t5_row *p = paper_t5; p->name; p++) {
        char pt[16] = "—", ps[16] = "—", st[16] = "—", ss[16] = "—";
        if (p->tflops > 0) {
            snprintf(pt, sizeof pt, "%.1f", p->tflops);
            snprintf(ps, sizeof ps, "%.2fx", paper_t5_slowdown(p));
        }
        out_rec_obj(r, NULL);
        out_rec_str(r, "variant", p->name);
        out_rec_dbl(r, "paper_tflops", p->tflops > 0 ? p->tflops : NAN);
        out_rec_dbl(r, "paper_slowdown", p->tflops > 0 ? paper_t5_slowdown(p) : NAN);
        for (int k = 0; k < doc->nrows; k++)
            if (strcmp(doc->rows[k].name, p->name) == 0) {
                out_rec_dbl(r, "stored_tflops", doc->rows[k].tflops);
                out_rec_dbl(r, "stored_slowdown", doc->rows[k].slowdown);
                snprintf(st, sizeof st, "%.1f", doc->rows[k].tflops);
                snprintf(ss, sizeof ss, "%.2fx", doc->rows[k].slowdown);
                if (n < 16) {
                    names[n] = p->name;
                    slow[n++] = doc->rows[k].slowdown;
                }
            }
        char c1[32], c2[32], c3[32], c4[32];
        out_printf("  %-20s %s %s %s %s\n", p->name, teach_cell(c1, sizeof c1, pt, 12),
                   teach_cell(c2, sizeof c2, ps, 9), teach_cell(c3, sizeof c3, st, 14),
                   teach_cell(c4, sizeof c4, ss, 12));
        out_rec_close(r);
    }
    out_rec_close(r);
    out_rec_end(r);
    teach_print_ranking(names, slow, n, "stored");
}

void teach_print_ranking(const char *const *names, const double *slow, int n, const char *what)
{
    /* Rank of each row here (by slowdown, largest first) and in the paper,
     * among the rows both have. */
    int idx[16], m = 0;
    for (int k = 0; k < n && m < 16; k++)
        if (slow[k] > 0 && paper_t5_slowdown(paper_t5_find(names[k])) > 0)
            idx[m++] = k;
    if (m == 0)
        return;
    for (int a = 1; a < m; a++)
        for (int b = a; b > 0 && slow[idx[b]] > slow[idx[b - 1]]; b--) {
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    out_printf("ranked by slowdown, %s (the paper's rank and slowdown in brackets):\n", what);
    for (int r = 0; r < m; r++) {
        const paper_t5_row *p = paper_t5_find(names[idx[r]]);
        double ps = paper_t5_slowdown(p);
        int prank = 1;
        for (int o = 0; o < m; o++)
            if (paper_t5_slowdown(paper_t5_find(names[idx[o]])) > ps)
                prank++;
        out_printf("  %d. %-20s %5.2fx  [paper %d: %.2fx]%s%s\n", r + 1, p->name, slow[idx[r]],
                   prank, ps, prank != r + 1 ? "  likely: " : "", prank != r + 1 ? p->why : "");
    }
}

void teach_print_t6(const teach_t6_cells *c, const char *title, int measured)
{
    out_printf("%s\n", title);
    out_printf("  %-24s", "metric: measured (paper)");
    for (int col = 0; col < PAPER_T6_COLS; col++) {
        char h[32], cell[48];
        snprintf(h, sizeof h, "%s d=%d", paper_t6_engine[col / 3], paper_t6_d[col % 3]);
        out_printf(" %s", teach_cell(cell, sizeof cell, h, 16));
    }
    out_printf("\n");
    out_rec *r = out_rec_begin("profile_table6");
    out_rec_bool(r, "measured_here", measured);
    out_rec_str(r, "title", title);
    out_rec_arr(r, "rows");
    int star = 0;
    for (int m = 0; paper_t6[m].label; m++) {
        const paper_t6_metric *pm = &paper_t6[m];
        char label[48];
        snprintf(label, sizeof label, "%s %s", pm->label, pm->unit);
        out_printf("  %-24s", label);
        out_rec_obj(r, NULL);
        out_rec_str(r, "metric", pm->label);
        out_rec_str(r, "unit", pm->unit);
        out_rec_arr(r, "cells");
        for (int col = 0; col < PAPER_T6_COLS; col++) {
            char mv[24] = "—", pv[24] = "—", cell[64], out[80];
            double v = c->v[m][col];
            if (!isnan(v))
                snprintf(mv, sizeof mv, pm->scale != 1 ? "%.0f" : "%.1f", v);
            /* the paper could not run TED-Join at d=4096 */
            const int ted4096 = col == 5;
            if (ted4096)
                snprintf(pv, sizeof pv, "oos");
            else if (!isnan(pm->paper[col]))
                snprintf(pv, sizeof pv, pm->paper[col] >= 1000 ? "%.0f" : "%.3g", pm->paper[col]);
            snprintf(cell, sizeof cell, "%s%s (%s)", mv, ted4096 && !isnan(v) ? "*" : "", pv);
            star |= ted4096 && !isnan(v);
            out_printf(" %s", teach_cell(out, sizeof out, cell, 16));
            out_rec_obj(r, NULL);
            out_rec_str(r, "engine", paper_t6_engine[col / 3]);
            out_rec_int(r, "d", paper_t6_d[col % 3]);
            out_rec_dbl(r, "value", v);
            out_rec_dbl(r, "paper", pm->paper[col]);
            out_rec_close(r);
        }
        out_rec_close(r);
        out_rec_close(r);
        out_printf("\n");
    }
    out_rec_close(r);
    out_rec_end(r);
    for (int col = 0; col < PAPER_T6_COLS; col++)
        if (c->note[col][0])
            out_printf("  %s d=%d: %s\n", paper_t6_engine[col / 3], paper_t6_d[col % 3],
                       c->note[col]);
    out_printf("%s\n%s\n", paper_t6_note, paper_t6_ted_smem);
    /* Stored cells were measured by tcjoin elsewhere (docs/BENCHMARKS.md),
     * not here: the footnote must not contradict the title. */
    if (star)
        out_printf("*: %s although the paper's TED-Join could not run it.\n",
                   measured ? "measured here" : "measured by tcjoin (docs/BENCHMARKS.md)");
}

void teach_t6_init(teach_t6_cells *c)
{
    memset(c, 0, sizeof *c);
    for (int m = 0; m < 8; m++)
        for (int col = 0; col < PAPER_T6_COLS; col++)
            c->v[m][col] = NAN;
}

void teach_print_t6_stored(const teach_bench *doc, const char *why)
{
    teach_t6_cells c;
    teach_t6_init(&c);
    for (int m = 0; paper_t6[m].label; m++)
        for (int k = 0; k < doc->nt6; k++)
            if (strncmp(doc->t6[k].metric, paper_t6[m].label, strlen(paper_t6[m].label)) == 0)
                for (int col = 0; col < PAPER_T6_COLS; col++)
                    c.v[m][col] = doc->t6[k].v[col];
    char title[640];
    snprintf(title, sizeof title, "profile table6: NOT MEASURED HERE (%s); %s", why,
             doc->nt6 ? doc->t6_label : "docs/BENCHMARKS.md has no Table 6 in this build");
    teach_print_t6(&c, title, 0);
}
