/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_code.c: the code half of the CUDA driver layer (cuda.h): PTX linked into cubins (cuLink*, the JIT's
 * log in error messages), modules loaded into a device's primary context, kernels looked up, their
 * attributes and occupancy, launches. cuda.c holds the other half and the top comment. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_driver.h"

/* ---- code --------------------------------------------------------------------------------------- */
void rt_cuda_free_host(RtCuda *cu, void *p) {
  if (cu) ctx_free(cu->ctx, p);
}

enum { RT_CU_LOG_BYTES = 8192 };

LoomStatus rt_cuda_link_ptx(RtCuda *cu, int device, const char *ptx, const char *name, int opt_level,
                            void **cubin, size_t *cubin_size, Diag *d) {
  if (!ptx || !cubin || !cubin_size)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_link_ptx: NULL argument");
  *cubin = NULL;
  *cubin_size = 0;
  SET_CURRENT(cu, device, d);
  return rt_cu_link(cu, device, ptx, strlen(ptx), name, opt_level, cubin, cubin_size, d);
}

/* The link hook: PTX (size bytes, NUL-terminated) into a cubin; the device is current. */
LoomStatus rt_cu_link(void *drv, int device, const char *ptx, size_t size, const char *name, int opt_level,
                      void **cubin, size_t *cubin_size, Diag *d) {
  RtCuda *cu = drv;
  *cubin = NULL;
  *cubin_size = 0;
  if (!name) name = "loom.ptx";
  char *errlog = ctx_calloc(cu->ctx, 1, RT_CU_LOG_BYTES);
  if (!errlog) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory linking %s", name);
  CUjit_option opts[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[4] = {errlog, (void *)(uintptr_t)RT_CU_LOG_BYTES};
  unsigned nopt = 2;
  if (opt_level >= 0 && opt_level <= 4) {
    opts[nopt] = CU_JIT_OPTIMIZATION_LEVEL;
    vals[nopt++] = (void *)(uintptr_t)opt_level;
  }
  /* only a module of several functions gains (one function: ~1 ms of thread start-up lost); last, so
   * that a retry can drop it */
  int threads = __atomic_load_n(&cu->jit_threads, __ATOMIC_RELAXED);
  int split = threads != 1 && strstr(ptx, ".func") != NULL;
  if (split) {
    opts[nopt] = CU_JIT_SPLIT_COMPILE;
    vals[nopt++] = (void *)(uintptr_t)threads;
  }
  CUlinkState ls = NULL;
  LoomStatus st = LOOM_OK;
  CUresult r = cu->fn.LinkCreate(nopt, opts, vals, &ls);
  if (r == CUDA_ERROR_INVALID_VALUE && split) { /* a driver before CUDA 12 has no split option */
    __atomic_store_n(&cu->jit_threads, 1, __ATOMIC_RELAXED);
    r = cu->fn.LinkCreate(nopt - 1, opts, vals, &ls);
  }
  if (r != CUDA_SUCCESS) {
    st = rt_cu_fail(cu, r, "cuLinkCreate", device, d);
    goto done;
  }
  /* cuLinkAddData takes a non-const pointer but does not write; the size includes the NUL. */
  void *data;
  memcpy(&data, &ptx, sizeof data);
  r = cu->fn.LinkAddData(ls, CU_JIT_INPUT_PTX, data, size + 1, name, 0, NULL, NULL);
  void *bin = NULL;
  size_t bin_size = 0;
  if (r == CUDA_SUCCESS) r = cu->fn.LinkComplete(ls, &bin, &bin_size);
  if (r != CUDA_SUCCESS) {
    const char *ename = NULL;
    cu->fn.GetErrorName(r, &ename);
    errlog[RT_CU_LOG_BYTES - 1] = '\0';
    st = diag_error(d, r == CUDA_ERROR_OUT_OF_MEMORY ? LOOM_ERR_OUT_OF_MEMORY : LOOM_ERR_BACKEND,
                    "linking PTX %s for CUDA device %d failed: %s: %s", name, device,
                    ename ? ename : "unknown CUDA error", errlog[0] ? errlog : "(no JIT log)");
    goto done;
  }
  void *copy = ctx_alloc(cu->ctx, bin_size ? bin_size : 1);
  if (!copy) {
    st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory copying a %zu-byte cubin", bin_size);
    goto done;
  }
  memcpy(copy, bin, bin_size);
  *cubin = copy;
  *cubin_size = bin_size;
done:
  if (ls) cu->fn.LinkDestroy(ls);
  ctx_free(cu->ctx, errlog);
  return st;
}

LoomStatus rt_cuda_module_load(RtCuda *cu, int device, const void *image, size_t size,
                               RtCuModule **out, Diag *d) {
  if (!image || !out || size == 0)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_module_load: empty or NULL image");
  *out = NULL;
  SET_CURRENT(cu, device, d);
  RtCuModule *m = ctx_calloc(cu->ctx, 1, sizeof *m);
  if (!m) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory loading a CUDA module");
  m->device = device;
  void *h = NULL;
  LoomStatus st = rt_cu_module_load(cu, device, image, size, &h, d);
  if (st != LOOM_OK) {
    ctx_free(cu->ctx, m);
    return st;
  }
  m->h = h;
  *out = m;
  return LOOM_OK;
}

void rt_cuda_module_unload(RtCuda *cu, RtCuModule *m) {
  if (!cu || !m) return;
  if (rt_cuda_set_current(cu, m->device, NULL) == LOOM_OK) cu->fn.ModuleUnload(m->h);
  ctx_free(cu->ctx, m);
}

LoomStatus rt_cuda_module_kernel(RtCuda *cu, RtCuModule *m, const char *name, RtCuKernel *out,
                                 Diag *d) {
  if (!m || !name || !out)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_module_kernel: NULL argument");
  SET_CURRENT(cu, m->device, d);
  void *f = NULL;
  LoomStatus st = rt_cu_module_function(cu, m->device, m->h, name, &f, d);
  if (st != LOOM_OK) return st;
  out->handle = f;
  out->device = m->device;
  return LOOM_OK;
}

LoomStatus rt_cuda_kernel_attrs(RtCuda *cu, const RtCuKernel *k, RtCuKernelAttrs *out, Diag *d) {
  if (!k || !k->handle || !out)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_kernel_attrs: NULL argument");
  SET_CURRENT(cu, k->device, d);
  static const struct {
    CUfunction_attribute attr;
    size_t offset;
  } attrs[] = {
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(RtCuKernelAttrs, max_threads_per_block)},
      {CU_FUNC_ATTRIBUTE_NUM_REGS, offsetof(RtCuKernelAttrs, num_regs)},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, offsetof(RtCuKernelAttrs, shared_bytes)},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, offsetof(RtCuKernelAttrs, local_bytes)},
      {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, offsetof(RtCuKernelAttrs, const_bytes)},
      {CU_FUNC_ATTRIBUTE_PTX_VERSION, offsetof(RtCuKernelAttrs, ptx_version)},
      {CU_FUNC_ATTRIBUTE_BINARY_VERSION, offsetof(RtCuKernelAttrs, binary_version)},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    int v = 0;
    CU_CALL(cu, k->device, d, "cuFuncGetAttribute",
            cu->fn.FuncGetAttribute(&v, attrs[i].attr, (CUfunction)k->handle));
    int32_t v32 = v;
    memcpy((char *)out + attrs[i].offset, &v32, sizeof v32);
  }
  return LOOM_OK;
}

LoomStatus rt_cuda_occupancy(RtCuda *cu, const RtCuKernel *k, int block_size, size_t dynamic_shared,
                             int *blocks_per_sm, Diag *d) {
  if (!k || !k->handle || !blocks_per_sm)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_occupancy: NULL argument");
  if (block_size <= 0)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_occupancy: block size %d must be positive",
                      block_size);
  SET_CURRENT(cu, k->device, d);
  return rt_cu_occupancy(cu, k->device, k->handle, block_size, dynamic_shared, blocks_per_sm, d);
}

LoomStatus rt_cuda_best_block_size(RtCuda *cu, const RtCuKernel *k, size_t dynamic_shared,
                                   int *block_size, Diag *d) {
  if (!block_size) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_best_block_size: NULL");
  RtCuKernelAttrs a;
  LoomStatus st = rt_cuda_kernel_attrs(cu, k, &a, d);
  if (st != LOOM_OK) return st;
  RtCuDeviceInfo info;
  if ((st = rt_cuda_device_info(cu, k->device, &info, d)) != LOOM_OK) return st;
  int warp = info.warp_size > 0 ? info.warp_size : 32;
  int limit = a.max_threads_per_block < info.max_threads_per_block ? a.max_threads_per_block
                                                                   : info.max_threads_per_block;
  int best = 0, best_threads = -1;
  for (int bs = warp; bs <= limit; bs += warp) {
    int blocks = 0;
    if ((st = rt_cuda_occupancy(cu, k, bs, dynamic_shared, &blocks, d)) != LOOM_OK) return st;
    if (blocks * bs > best_threads) {
      best_threads = blocks * bs;
      best = bs;
    }
  }
  if (best == 0 || best_threads <= 0)
    return diag_error(d, LOOM_ERR_BACKEND,
                      "the kernel cannot run on CUDA device %d with %zu bytes of dynamic shared memory",
                      k->device, dynamic_shared);
  *block_size = best;
  return LOOM_OK;
}

LoomStatus rt_cuda_launch(RtCuda *cu, const RtCuKernel *k, const uint32_t grid[3],
                          const uint32_t block[3], uint32_t shared_bytes, RtCuStream *s,
                          void **params, Diag *d) {
  if (!k || !k->handle || !grid || !block)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_launch: NULL argument");
  for (int i = 0; i < 3; i++)
    if (grid[i] == 0 || block[i] == 0)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                        "rt_cuda_launch: grid (%u,%u,%u) and block (%u,%u,%u) must be positive",
                        grid[0], grid[1], grid[2], block[0], block[1], block[2]);
  CHECK_COPY(cu, k->device, s, d);
  return rt_cu_launch(cu, k->device, k->handle, grid, block, shared_bytes, s ? s->h : NULL, params, d);
}

/* ---- the driver table's hooks (RtGpuDriver, runtime/gpu/gpu_driver.h): raw handles, device current ---- */
LoomStatus rt_cu_module_load(void *drv, int device, const void *image, size_t size, void **out, Diag *d) {
  RtCuda *cu = drv;
  CUmodule h = NULL;
  CU_CALL(cu, device, d, "cuModuleLoadData", cu->fn.ModuleLoadData(&h, image));
  *out = h;
  return LOOM_OK;
}

void rt_cu_module_unload(void *drv, int device, void *module) {
  RtCuda *cu = drv;
  cu->fn.ModuleUnload((CUmodule)module);
}

LoomStatus rt_cu_module_function(void *drv, int device, void *module, const char *name, void **fn, Diag *d) {
  RtCuda *cu = drv;
  CUfunction f = NULL;
  CUresult r = cu->fn.ModuleGetFunction(&f, (CUmodule)module, name);
  if (r != CUDA_SUCCESS) {
    const char *ename = NULL;
    cu->fn.GetErrorName(r, &ename);
    return diag_error(d, LOOM_ERR_BACKEND, "kernel '%s' not found in the CUDA module: %s", name,
                      ename ? ename : "unknown CUDA error");
  }
  *fn = f;
  return LOOM_OK;
}

LoomStatus rt_cu_func_attrs(void *drv, int device, void *fn, RtGpuFuncAttrs *out, Diag *d) {
  RtCuda *cu = drv;
  int v = 0;
  CU_CALL(cu, device, d, "cuFuncGetAttribute",
          cu->fn.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, (CUfunction)fn));
  out->max_threads_per_block = v;
  CU_CALL(cu, device, d, "cuFuncGetAttribute", cu->fn.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUfunction)fn));
  out->num_regs = v;
  return LOOM_OK;
}

LoomStatus rt_cu_occupancy(void *drv, int device, void *fn, int block, size_t dynamic_shared, int *blocks_per_sm,
                           Diag *d) {
  RtCuda *cu = drv;
  int n = 0;
  CU_CALL(cu, device, d, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
          cu->fn.OccupancyMaxActiveBlocksPerMultiprocessor(&n, (CUfunction)fn, block, dynamic_shared));
  *blocks_per_sm = n;
  return LOOM_OK;
}

LoomStatus rt_cu_launch(void *drv, int device, void *fn, const uint32_t grid[3], const uint32_t block[3],
                        uint32_t shared_bytes, void *stream, void **params, Diag *d) {
  RtCuda *cu = drv;
  CU_CALL(cu, device, d, "cuLaunchKernel",
          cu->fn.LaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                              (CUstream)stream, params, NULL));
  return LOOM_OK;
}
