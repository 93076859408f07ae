/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_drivers.c: the GPU driver tables of libloomrt (runtime/gpu/gpu_driver.h's RtGpuDriver) for CUDA
 * and HIP, filled from the same driver layers libloom uses (runtime/cuda/cuda.c + cuda_code.c: libcuda;
 * runtime/hip/hip.c: libamdhip64; both dlopen'ed) but with no compiler: target_create is NULL (a bundle
 * carries the binaries) and libcuda's link hook is left out (a bundle's PTX is loaded as is, the driver
 * JIT-compiles it). The entries both libraries share are runtime/cuda/cuda_table.c's and
 * runtime/hip/hip_table.c's (RT_CUDA_DRIVER_COMMON, RT_HIP_DRIVER_COMMON); what is left here is each
 * driver's load with no JIT policy and, for AMD, the module loader without comgr's metadata check (HIP
 * reads the same metadata itself when it loads the code object). runtime/cuda/cuda_device.c and
 * runtime/hip/hip_device.c cannot be linked here: their tables name the NVPTX and AMDGPU targets (LLVM).
 */
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
static const RtGpuDriver loomrt_cuda_driver = {
    RT_CUDA_DRIVER_COMMON, /* runtime/cuda/cuda_table.c and the driver layer */
    .load = cu_load,
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
static const RtGpuDriver loomrt_hip_driver = {
    RT_HIP_DRIVER_COMMON, /* runtime/hip/hip_table.c and the HIP layer */
    .load = hip_load,
    .module_load = rt_hip_module_load,
};

const RtGpuDriver *rtrt_driver(LoomDeviceKind kind) {
  return kind == LOOM_DEVICE_CUDA ? &loomrt_cuda_driver : kind == LOOM_DEVICE_HIP ? &loomrt_hip_driver : NULL;
}
