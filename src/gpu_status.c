/* The front ends' view of the GPUs (src/gpu_status.h): the device count
 * from the kernels' side. The NVML half lives in src/nvml.c. */
#include "gpu_status.h"

#include "kernels.h"

int gpu_status_devices(void)
{
    return kern_device_count();
}
