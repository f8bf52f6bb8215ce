/* What a front end may know of the GPUs, without the kernels' or NVML's
 * whole interface (ui/ includes this, never kernels.h or nvml.h): whether a
 * CUDA device exists, and NVML's clock samples with the sampler's state
 * (src/nvml.c implements those; src/nvml.h is the rest of that module). */
#ifndef TCJ_GPU_STATUS_H
#define TCJ_GPU_STATUS_H

#include <stddef.h>

/* CUDA devices present (0: none, or no driver, or a build without CUDA). */
int gpu_status_devices(void);

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

/* Load the library and initialise NVML once. 0, or TCJ_EUNSUP with
 * err_msg saying why (library missing, no driver, no device). Safe to call
 * again; later calls return the first outcome. */
int nvml_open(void);
/* Why NVML is not usable ("" when it is). Valid after nvml_open. */
const char *nvml_unavailable_reason(void);

/* 1 while the sampler runs. */
int nvml_sampler_running(void);

/* Copy the most recent samples of the latest sampling (oldest first), at
 * most max; returns how many. Safe while the sampler runs. */
size_t nvml_series(nvml_sample *out, size_t max);

/* "power cap, thermal" etc. for a reasons mask ("none" for 0). */
void nvml_reasons_str(unsigned long long mask, char *buf, size_t size);

#endif
