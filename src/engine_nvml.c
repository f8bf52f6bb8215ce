/* A GPU run's NVML figures as the run's metrics (engine_run samples every
 * GPU run: src/engine.c). The engine side of the pair, so that src/nvml.c
 * knows nothing of runs: nvml.h gives samples and their summaries,
 * engine.h these two functions. */
#include <math.h>
#include <stdio.h>

#include "engine.h"
#include "nvml.h"

static void add1(join_result *r, int dev, const char *base, double v, const char *unit)
{
    char name[128];
    nvml_metric_name(name, sizeof name, dev, base);
    join_result_metric(r, name, v, unit);
}

static void add3(join_result *r, int dev, const char *base, const nvml_stat *s, const char *unit)
{
    if (s->n == 0)
        return; /* N/A: left out, not 0 */
    char name[64];
    snprintf(name, sizeof name, "%s.min", base);
    add1(r, dev, name, s->min, unit);
    snprintf(name, sizeof name, "%s.mean", base);
    add1(r, dev, name, s->mean, unit);
    snprintf(name, sizeof name, "%s.max", base);
    add1(r, dev, name, s->max, unit);
}

void nvml_add_metrics(join_result *r, const nvml_stats *st)
{
    nvml_add_metrics_dev(r, st, -1);
}

void nvml_add_metrics_dev(join_result *r, const nvml_stats *st, int dev)
{
    if (st->samples == 0)
        return;
    add3(r, dev, "sm_clock_mhz", &st->sm_mhz, "MHz");
    if (st->mem_mhz.n)
        add1(r, dev, "mem_clock_mhz.mean", st->mem_mhz.mean, "MHz");
    add3(r, dev, "power_w", &st->power_w, "W");
    if (!isnan(st->power_limit_w))
        add1(r, dev, "power_limit_w", st->power_limit_w, "W");
    if (st->temp_c.n)
        add1(r, dev, "temp_c.max", st->temp_c.max, "C");
    if (st->have_reasons)
        add1(r, dev, "throttle_reasons", (double)st->reasons_any, "mask");
    add1(r, dev, "nvml.samples", (double)st->samples, "");
}
