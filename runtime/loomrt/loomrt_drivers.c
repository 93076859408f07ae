/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_drivers.c: the GPU driver tables of libloomrt (runtime/gpu/gpu_driver.h's RtGpuDriver) for CUDA
 * and HIP, filled from the same driver layers libloom uses (runtime/cuda/cuda.c + cuda_code.c: libcuda;
 * runtime/hip/hip.c: libamdhip64; both dlopen'ed) but with no compiler: target_create is NULL (a bundle
 * carries the binaries) and libcuda's link hook is left out (a bundle's PTX is loaded as is, the driver
 * JIT-compiles it). The few adapters below mirror those of runtime/cuda/cuda_device.c and
 * runtime/hip/hip_device.c, which cannot be linked here: their tables name the NVPTX and AMDGPU targets
 * (LLVM) and, for AMD, comgr's metadata check (HIP reads the same metadata itself when it loads the
 * code object).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/cuda/cuda_driver.h"
#include "runtime/hip/hip.h"
#include "runtime/loomrt/loomrt_internal.h"

/* ---- CUDA ------------------------------------------------------------------------------------------------ */
static LoomStatus cu_load(LoomContext *ctx, void **out, int *ndev, RtGpuJit *jit, Diag *d) {
  RtCuda *cu = NULL;
  LoomStatus st = rt_cuda_load(ctx, &cu, d);
  if (st != LOOM_OK) return st;
  *out = cu;
  *ndev = rt_cuda_device_count(cu);
  jit->final_level = -1;
  jit->tiers = false;
  return LOOM_OK;
}
static void cu_unload(void *drv) { rt_cuda_unload(drv); }
static LoomStatus cu_device_info(void *drv, int device, RtGpuDeviceInfo *out, Diag *d) {
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
static LoomStatus cu_retain(void *drv, int device, Diag *d) { return rt_cuda_device_retain(drv, device, d); }
static void cu_release(void *drv, int device) { rt_cuda_device_release(drv, device); }
static LoomStatus cu_set_current(void *drv, int device, Diag *d) { return rt_cuda_set_current(drv, device, d); }
static LoomStatus cu_synchronize(void *drv, int device, Diag *d) { return rt_cuda_device_synchronize(drv, device, d); }

static const RtGpuDriver loomrt_cuda_driver = {
    .name = "CUDA",
    .kind = LOOM_DEVICE_CUDA,
    .binary = CG_BINARY_PTX,
    .load = cu_load,
    .unload = cu_unload,
    .device_info = cu_device_info,
    .retain = cu_retain,
    .release = cu_release,
    .set_current = cu_set_current,
    .synchronize = cu_synchronize,
    .mem_alloc = rt_cu_mem_alloc,
    .mem_free = rt_cu_mem_free,
    .copy_h2d = rt_cu_copy_h2d,
    .copy_d2h = rt_cu_copy_d2h,
    .copy_d2d = rt_cu_copy_d2d,
    .copy_peer = rt_cu_copy_peer,
    .stream_create = rt_cu_stream_create,
    .stream_destroy = rt_cu_stream_destroy,
    .stream_synchronize = rt_cu_stream_synchronize,
    .event_create = rt_cu_event_create,
    .event_destroy = rt_cu_event_destroy,
    .event_record = rt_cu_event_record,
    .event_synchronize = rt_cu_event_synchronize,
    .event_elapsed = rt_cu_event_elapsed,
    .module_load = rt_cu_module_load,
    .module_unload = rt_cu_module_unload,
    .module_function = rt_cu_module_function,
    .func_attrs = rt_cu_func_attrs,
    .occupancy = rt_cu_occupancy,
    .launch = rt_cu_launch,
};

/* ---- HIP ------------------------------------------------------------------------------------------------- */
static LoomStatus hip_load(LoomContext *ctx, void **out, int *ndev, RtGpuJit *jit, Diag *d) {
  RtHip *h = NULL;
  LoomStatus st = rt_hip_load(ctx, &h, d);
  if (st != LOOM_OK) return st;
  *out = h;
  *ndev = rt_hip_device_count(h);
  jit->final_level = -1;
  jit->tiers = false;
  return LOOM_OK;
}
static void hip_unload(void *drv) { rt_hip_unload(drv); }
static LoomStatus hip_device_info(void *drv, int device, RtGpuDeviceInfo *out, Diag *d) {
  return rt_hip_device_info(drv, device, out, d);
}
/* HIP keeps each device's primary context itself: retaining is making the device current. */
static LoomStatus hip_retain(void *drv, int device, Diag *d) { return rt_hip_set_device(drv, device, d); }
static void hip_release(void *drv, int device) {
  (void)drv;
  (void)device;
}
static LoomStatus hip_synchronize(void *drv, int device, Diag *d) { return rt_hip_device_synchronize(drv, device, d); }

static const RtGpuDriver loomrt_hip_driver = {
    .name = "AMD",
    .kind = LOOM_DEVICE_HIP,
    .binary = CG_BINARY_AMDGPU,
    .load = hip_load,
    .unload = hip_unload,
    .device_info = hip_device_info,
    .retain = hip_retain,
    .release = hip_release,
    .set_current = hip_retain,
    .synchronize = hip_synchronize,
    .mem_alloc = rt_hip_mem_alloc,
    .mem_free = rt_hip_mem_free,
    .copy_h2d = rt_hip_copy_h2d,
    .copy_d2h = rt_hip_copy_d2h,
    .copy_d2d = rt_hip_copy_d2d,
    .copy_peer = rt_hip_copy_peer,
    .stream_create = rt_hip_stream_create,
    .stream_destroy = rt_hip_stream_destroy,
    .stream_synchronize = rt_hip_stream_synchronize,
    .event_create = rt_hip_event_create,
    .event_destroy = rt_hip_event_destroy,
    .event_record = rt_hip_event_record,
    .event_synchronize = rt_hip_event_synchronize,
    .event_elapsed = rt_hip_event_elapsed,
    .module_load = rt_hip_module_load,
    .module_unload = rt_hip_module_unload,
    .module_function = rt_hip_module_function,
    .func_attrs = rt_hip_func_attrs,
    .occupancy = rt_hip_occupancy,
    .launch = rt_hip_launch,
};

const RtGpuDriver *rtrt_driver(LoomDeviceKind kind) {
  return kind == LOOM_DEVICE_CUDA ? &loomrt_cuda_driver : kind == LOOM_DEVICE_HIP ? &loomrt_hip_driver : NULL;
}
