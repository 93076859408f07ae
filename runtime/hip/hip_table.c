/* SPDX-License-Identifier: Apache-2.0 */
/* hip_table.c: the LLVM-free entries of HIP's driver table (runtime/gpu/gpu_driver.h's RtGpuDriver): device
 * facts, retain / release (HIP keeps each device's primary context itself: retaining is making the device
 * current), making a device current, synchronizing, over the HIP layer (hip.c). libloom's table
 * (hip_device.c) and libloomrt's (runtime/loomrt/loomrt_drivers.c) both take them, with
 * RT_HIP_DRIVER_COMMON (hip.h) for the entries they share; each adds its own load and module loader
 * (libloom checks a code object's metadata with comgr first). */
#include "runtime/hip/hip.h"

void rt_hip_drv_unload(void *drv) { rt_hip_unload(drv); }
LoomStatus rt_hip_drv_device_info(void *drv, int device, RtGpuDeviceInfo *out, Diag *d) {
  return rt_hip_device_info(drv, device, out, d);
}
LoomStatus rt_hip_drv_retain(void *drv, int device, Diag *d) { return rt_hip_set_device(drv, device, d); }
void rt_hip_drv_release(void *drv, int device) {
  (void)drv;
  (void)device;
}
LoomStatus rt_hip_drv_synchronize(void *drv, int device, Diag *d) { return rt_hip_device_synchronize(drv, device, d); }
