/* Clocks panel: SM clock and power over the latest GPU run (NVML samples)
 * with min/mean/max and the throttle reasons, the way the FASTED paper
 * found its GPU held at 1.12 GHz by its power limit. */
#include <math.h>
#include <stdio.h>

#include "panels.h"
#include "plot.h"

static void series_line(WINDOW *w, int row, int wd, const ui_pctx *c, const char *label,
                        unsigned bit, int which)
{
    double v[1024];
    size_t n = 0;
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    size_t m = 0;
    size_t first = c->nseries > 1024 ? c->nseries - 1024 : 0;
    for (size_t k = first; k < c->nseries; k++) {
        const nvml_sample *s = &c->series[k];
        double x = !(s->valid & bit) ? NAN : which == 0 ? s->sm_mhz : s->power_w;
        v[n++] = x;
        if (!isnan(x)) {
            lo = fmin(lo, x), hi = fmax(hi, x), sum += x, m++;
        }
    }
    if (m == 0) {
        ui_putf(w, row, 0, "%-6s N/A", label);
        return;
    }
    char a[16], b[16], d[16];
    ui_fmt_num(a, sizeof a, lo);
    ui_fmt_num(b, sizeof b, sum / (double)m);
    ui_fmt_num(d, sizeof d, hi);
    char text[96];
    int tl = snprintf(text, sizeof text, " %s/%s/%s", a, b, d);
    ui_putf(w, row, 0, "%-6s", label);
    int sw = wd - 7 - tl;
    if (sw > 2) {
        char spark[1100];
        /* Down-sample to the width: each cell shows the mean of its span. */
        double cell[1024];
        int cw = sw > 1024 ? 1024 : sw;
        size_t per = (n + (size_t)cw - 1) / (size_t)cw;
        int nc = 0;
        for (size_t k = 0; k < n; k += per) {
            double s = 0;
            size_t cnt = 0;
            for (size_t j = k; j < k + per && j < n; j++)
                if (!isnan(v[j]))
                    s += v[j], cnt++;
            cell[nc++] = cnt ? s / (double)cnt : NAN;
        }
        /* Scale from 0 so a drop from boost clock reads as the drop it is. */
        ui_plot_spark(spark, nc, cell, (size_t)nc, 0, hi);
        wattron(w, ui_attr(c, UI_C_BAR));
        ui_put(w, row, 7, spark);
        wattroff(w, ui_attr(c, UI_C_BAR));
    }
    ui_put(w, row, wd - tl, text);
}

void ui_panel_clocks(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    int row = 0;
    if (c->nseries > 0) {
        double secs = c->series[c->nseries - 1].t;
        ui_putf(w, row++, 0, "%s%s %zu samples over %.2f s (min/mean/max)", c->live ? "live " : "",
                v->clk_engine[0] ? v->clk_engine : "gpu", c->nseries, secs);
        if (row < h)
            series_line(w, row++, wd, c, "SM MHz", NVML_V_SM, 0);
        if (row < h)
            series_line(w, row++, wd, c, "W", NVML_V_POWER, 1);
    } else if (v->nclk > 0) {
        ui_putf(w, row++, 0, "%s run %lld", v->clk_engine, (long long)v->clk_run);
        double a = ui_metric_get(v->clk, v->nclk, "sm_clock_mhz.min");
        double b = ui_metric_get(v->clk, v->nclk, "sm_clock_mhz.mean");
        double d = ui_metric_get(v->clk, v->nclk, "sm_clock_mhz.max");
        ui_putf(w, row++, 0, "SM MHz %.0f/%.0f/%.0f", a, b, d);
        a = ui_metric_get(v->clk, v->nclk, "power_w.min");
        b = ui_metric_get(v->clk, v->nclk, "power_w.mean");
        d = ui_metric_get(v->clk, v->nclk, "power_w.max");
        if (row < h)
            ui_putf(w, row++, 0, "W      %.0f/%.0f/%.0f", a, b, d);
    } else {
        ui_put(w, row++, 0, "no GPU run sampled yet");
        if (c->nvml_note && c->nvml_note[0] && row < h) {
            wattron(w, ui_attr(c, UI_C_WARN));
            ui_putf(w, row++, 0, "NVML N/A: %s", c->nvml_note);
            wattroff(w, ui_attr(c, UI_C_WARN));
        }
        return;
    }
    double t = ui_metric_get(v->clk, v->nclk, "temp_c.max");
    double lim = ui_metric_get(v->clk, v->nclk, "power_limit_w");
    if (row < h && (!isnan(t) || !isnan(lim)))
        ui_putf(w, row++, 0, "temp max %.0f C  power limit %.0f W", t, lim);
    double rs = ui_metric_get(v->clk, v->nclk, "throttle_reasons");
    if (row < h && !isnan(rs)) {
        char buf[160];
        nvml_reasons_str((unsigned long long)rs, buf, sizeof buf);
        wattron(w, ui_attr(c, rs > 1 ? UI_C_WARN : UI_C_DIM));
        ui_putf(w, row++, 0, "throttle: %s", buf);
        wattroff(w, ui_attr(c, rs > 1 ? UI_C_WARN : UI_C_DIM));
    }
}
