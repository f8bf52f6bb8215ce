/* Clocks, power, temperature and throttle reasons through NVML, opened with
 * dlopen("libnvidia-ml.so.1") at run time (no build-time nvml.h), so the
 * binary starts where the driver is missing. Every value carries a valid
 * bit: a metric NVML cannot give is N/A, never a fake 0.
 *
 * A background sampler thread reads the device every period during GPU runs
 * (engine_run starts and stops it for engines with gpu=1); its samples stay
 * in a ring buffer for the dashboard's clocks panel until the next start. */
#ifndef TCJ_NVML_H
#define TCJ_NVML_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

enum {
    NVML_V_SM = 1 << 0,      /* sm_mhz */
    NVML_V_MEM = 1 << 1,     /* mem_mhz */
    NVML_V_POWER = 1 << 2,   /* power_w */
    NVML_V_TEMP = 1 << 3,    /* temp_c */
    NVML_V_REASONS = 1 << 4, /* reasons */
    NVML_V_LIMIT = 1 << 5,   /* power_limit_w */
};

/* Throttle ("clocks event") reason bits, as NVML defines them. */
#define NVML_R_GPU_IDLE 0x1ULL
#define NVML_R_APP_CLOCKS 0x2ULL
#define NVML_R_SW_POWER_CAP 0x4ULL
#define NVML_R_HW_SLOWDOWN 0x8ULL
#define NVML_R_SYNC_BOOST 0x10ULL
#define NVML_R_SW_THERMAL 0x20ULL
#define NVML_R_HW_THERMAL 0x40ULL
#define NVML_R_HW_POWER_BRAKE 0x80ULL
#define NVML_R_DISPLAY_CLOCKS 0x100ULL

typedef struct nvml_sample {
    double t; /* seconds since the sampler started (0 for nvml_sample_now) */
    double sm_mhz, mem_mhz, power_w, temp_c, power_limit_w;
    unsigned long long reasons;
    unsigned valid; /* NVML_V_* bits; a value without its bit is NAN / 0 */
} nvml_sample;

typedef struct nvml_stat {
    double min, mean, max; /* NAN when no valid sample */
    size_t n;
} nvml_stat;

typedef struct nvml_stats {
    size_t samples;
    nvml_stat sm_mhz, mem_mhz, power_w, temp_c;
    double power_limit_w;           /* NAN when unknown */
    unsigned long long reasons_any; /* OR of reasons over the samples */
    int have_reasons;
    char reason[160]; /* why nothing was sampled ("" when samples exist) */
} nvml_stats;

/* Load the library and initialise NVML once. 0, or TCJ_EUNSUP with
 * err_msg saying why (library missing, no driver, no device). Safe to call
 * again; later calls return the first outcome. */
int nvml_open(void);
/* Why NVML is not usable ("" when it is). Valid after nvml_open. */
const char *nvml_unavailable_reason(void);

/* Read the device (CUDA ordinal dev, matched to NVML by PCI bus id when
 * possible, else by index) once. Returns 0 with out->valid telling which
 * metrics were read, or TCJ_EUNSUP with every metric invalid. */
int nvml_sample_now(int dev, nvml_sample *out);

/* Devices one sampler reads (`set devices` lists at most KERN_MAX_DEVICES). */
#define NVML_MAX_DEVS 8

/* Start the background sampler for device dev every period_ms (20 ms is a
 * good choice). Clears the ring. Returns 0 or TCJ_EUNSUP (no NVML: the
 * caller goes on without samples). */
int nvml_sampler_start(int dev, int period_ms);
/* The same for the ndev (1..NVML_MAX_DEVS) CUDA ordinals devs, each read
 * every period; the ring (nvml_series) holds the first one's samples.
 * TCJ_EUNSUP when any of them cannot be read. */
int nvml_sampler_start_list(const int *devs, int ndev, int period_ms);
/* Stop it, join the thread and summarise the first (or only) device.
 * Without a running sampler the stats say why (reason). */
void nvml_sampler_stop(nvml_stats *out);
/* After nvml_sampler_stop: each listed device's summary into out[k] and
 * its ordinal into devs[k], at most max; returns how many. */
int nvml_sampler_devices(nvml_stats *out, int *devs, int max);
/* 1 while the sampler runs. */
int nvml_sampler_running(void);

/* Copy the most recent samples of the latest sampling (oldest first), at
 * most max; returns how many. Safe while the sampler runs. */
size_t nvml_series(nvml_sample *out, size_t max);

/* "power cap, thermal" etc. for a reasons mask ("none" for 0). */
void nvml_reasons_str(unsigned long long mask, char *buf, size_t size);

/* Add the summary to a run as metrics: sm_clock_mhz.min/mean/max,
 * mem_clock_mhz.mean, power_w.min/mean/max, power_limit_w, temp_c.max,
 * throttle_reasons (the mask), nvml.samples. Metrics NVML could not read
 * are left out (N/A), not stored as 0. */
void nvml_add_metrics(join_result *r, const nvml_stats *st);
/* The same metrics for device dev of a run over several, each name
 * prefixed "devK_" (dev_K_items' style: devK_power_w.mean); dev < 0: the
 * plain names, as nvml_add_metrics. */
void nvml_add_metrics_dev(join_result *r, const nvml_stats *st, int dev);
/* A metric's name for device dev (< 0: base as it is). */
void nvml_metric_name(char *buf, size_t size, int dev, const char *base);

/* Tests only: pretend the library is at this path (NULL: the default). */
void nvml_set_library(const char *path);

#endif
