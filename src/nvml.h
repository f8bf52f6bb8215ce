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

#include "gpu_status.h"

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

/* A run's metrics from a summary: nvml_add_metrics in engine.h
 * (src/engine_nvml.c), so that this module knows nothing of runs. */
/* A metric's name for device dev (< 0: base as it is). */
void nvml_metric_name(char *buf, size_t size, int dev, const char *base);

/* Tests only: pretend the library is at this path (NULL: the default). */
void nvml_set_library(const char *path);

#endif
