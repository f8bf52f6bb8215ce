/* Device discovery and the thread-local error message shared by all
 * kernels/ files. */
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mutex>

#include "fasted_wgmma.cuh"
#include "kern_util.cuh"
#include "kernels.h"

static thread_local char kern_err_buf[512];

extern "C" const char *kern_error(void)
{
    return kern_err_buf;
}

int kern_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kern_err_buf, sizeof kern_err_buf, fmt, ap);
    va_end(ap);
    return code;
}

extern "C" int kern_fail_msg(int code, const char *msg)
{
    return kern_fail(code, "%s", msg);
}

int kern_cuda_fail(cudaError_t e, const char *what, const char *file, int line)
{
    /* Clear the sticky-free error state so the next run starts clean. */
    cudaGetLastError();
    return kern_fail(KERN_EGPU, "CUDA error in %s (%s:%d): %s", what, file, line,
                     cudaGetErrorString(e));
}

extern "C" int kern_built_with_cuda(void)
{
    return 1;
}

extern "C" int kern_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        kern_fail(KERN_ENODEV, "no CUDA device: %s", cudaGetErrorString(e));
        return 0;
    }
    if (n == 0)
        kern_fail(KERN_ENODEV, "no CUDA device");
    return n;
}

/* A device's facts do not change while the process runs, and
 * cudaGetDeviceProperties reads every attribute the device has: every
 * engine_available (each run, each of a k-distance's refinement joins)
 * asks, so the first answer for an ordinal is kept. */
#define KERN_INFO_SLOTS 64
static std::mutex g_info_mu;
static kern_device g_info[KERN_INFO_SLOTS];
static bool g_info_ok[KERN_INFO_SLOTS];

static int kern_device_info_read(int dev, kern_device *out);

extern "C" int kern_device_info(int dev, kern_device *out)
{
    const bool slot = dev >= 0 && dev < KERN_INFO_SLOTS;
    if (slot) {
        std::lock_guard<std::mutex> g(g_info_mu);
        if (g_info_ok[dev]) {
            *out = g_info[dev];
            return 0;
        }
    }
    const int rc = kern_device_info_read(dev, out);
    if (rc == 0 && slot) {
        std::lock_guard<std::mutex> g(g_info_mu);
        g_info[dev] = *out;
        g_info_ok[dev] = true;
    }
    return rc;
}

static int kern_device_info_read(int dev, kern_device *out)
{
    memset(out, 0, sizeof *out);
    cudaDeviceProp p;
    KERN_CUDA(cudaGetDeviceProperties(&p, dev));
    snprintf(out->name, sizeof out->name, "%.*s", (int)sizeof out->name - 1, p.name);
    out->major = p.major;
    out->minor = p.minor;
    out->sms = p.multiProcessorCount;
    out->global_mem = p.totalGlobalMem;
    out->l2_bytes = (size_t)p.l2CacheSize;
    out->smem_per_block_optin = p.sharedMemPerBlockOptin;
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev) == cudaSuccess)
        out->clock_khz = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev) == cudaSuccess)
        out->mem_clock_khz = v;
    cudaGetLastError();
    cudaDriverGetVersion(&out->driver_version);
    cudaRuntimeGetVersion(&out->runtime_version);
    return 0;
}

/* Compute capability of dev, or -1 with a message. */
static int kern_device_cc(int dev)
{
    int n = kern_device_count();
    if (dev < 0 || dev >= n) {
        if (n > 0)
            kern_fail(KERN_ENODEV, "no CUDA device %d (%d present)", dev, n);
        return -1;
    }
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        cudaGetLastError();
        kern_fail(KERN_ENODEV, "CUDA device %d: no compute capability", dev);
        return -1;
    }
    return major * 10 + minor;
}

extern "C" int kern_device_has_f64_mma(int dev)
{
    const int cc = kern_device_cc(dev);
    return cc >= 0 && kern_cc_has_f64_mma(cc);
}

extern "C" int kern_device_has_fp8_mma(int dev)
{
    const int cc = kern_device_cc(dev);
    return cc >= 0 && kern_cc_has_fp8_mma(cc);
}

extern "C" int kern_device_has_wgmma(int dev)
{
    return kern_device_cc(dev) >= 0 && fasted_wg_usable(dev);
}
