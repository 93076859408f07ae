/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_table.c: the LLVM-free entries of CUDA's driver table (runtime/gpu/gpu_driver.h's RtGpuDriver):
 * device facts, primary-context retain / release, making a device current, synchronizing, over the driver
 * layer (cuda.c). libloom's table (cuda_device.c) and libloomrt's (runtime/loomrt/loomrt_drivers.c) both
 * take them, with RT_CUDA_DRIVER_COMMON (cuda_driver.h) for the entries they share; each adds its own
 * load (the JIT policy) and, for libloom, the NVPTX target and the PTX link. */
#include <stdio.h>
#include <string.h>

#include "runtime/cuda/cuda_driver.h"

void rt_cuda_drv_unload(void *drv) { rt_cuda_unload(drv); }

LoomStatus rt_cuda_drv_device_info(void *drv, int device, RtGpuDeviceInfo *out, Diag *d) {
  RtCuDeviceInfo ci;
  LoomStatus st = rt_cuda_device_info(drv, device, &ci, d);
  if (st != LOOM_OK) return st;
  memset(out, 0, sizeof *out);
  memcpy(out->name, ci.name, sizeof out->name);
  snprintf(out->arch, sizeof out->arch, "sm_%d%d", (int)ci.cc_major, (int)ci.cc_minor);
  out->arch_major = ci.cc_major;
  out->arch_minor = ci.cc_minor;
  out->sm_count = ci.sm_count;
  out->max_threads_per_block = ci.max_threads_per_block;
  out->max_threads_per_sm = ci.max_threads_per_sm;
  out->wave = ci.warp_size > 0 ? ci.warp_size : 32;
  out->shared_per_block = ci.shared_per_block;
  out->l2_bytes = ci.l2_bytes;
  out->total_mem = ci.total_mem;
  return LOOM_OK;
}

LoomStatus rt_cuda_drv_retain(void *drv, int device, Diag *d) { return rt_cuda_device_retain(drv, device, d); }
void rt_cuda_drv_release(void *drv, int device) { rt_cuda_device_release(drv, device); }
LoomStatus rt_cuda_drv_set_current(void *drv, int device, Diag *d) { return rt_cuda_set_current(drv, device, d); }
LoomStatus rt_cuda_drv_synchronize(void *drv, int device, Diag *d) { return rt_cuda_device_synchronize(drv, device, d); }
