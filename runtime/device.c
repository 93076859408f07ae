/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: the one place where a LoomDeviceKind becomes a device table (device.h), and small helpers
 * every device uses (the clock, the launch statistics).
 *
 * A new device kind plugs in here: its file (runtime/hip/hip_device.c for AMD) defines one RtDevice
 * and this table names it; nothing else in the generic runtime changes.
 */
#include <stdio.h>
#include <time.h>

#include "runtime/device.h"

extern const RtDevice rt_host_device; /* runtime/host_device.c */
extern const RtDevice rt_cuda_device; /* runtime/cuda/cuda_device.c */
extern const RtDevice rt_hip_device;  /* runtime/hip/hip_device.c */

static const RtDevice *const devices[RT_DEVICE_KINDS] = {
    [LOOM_DEVICE_HOST] = &rt_host_device,
    [LOOM_DEVICE_CUDA] = &rt_cuda_device,
    [LOOM_DEVICE_HIP] = &rt_hip_device,
};

const RtDevice *rt_device(LoomDeviceKind kind) {
  return (unsigned)kind < RT_DEVICE_KINDS ? devices[kind] : NULL;
}

const RtDevice *rt_device_for_binary(int32_t binary) {
  for (int i = 0; i < RT_DEVICE_KINDS; i++)
    if (devices[i] && devices[i]->binary == binary) return devices[i];
  return NULL;
}

const RtDevice *rt_device_for_raw(LoomRawFormat *format, const void *code, size_t size) {
  /* an explicit format: the kind whose sniff recognizes this code as that format first (LLVM IR for
   * amdgcn is the AMD device's, for nvptx the CUDA device's), then the first kind taking the format */
  for (int i = 0; i < RT_DEVICE_KINDS && *format != LOOM_RAW_AUTO; i++) {
    const RtDevice *dev = devices[i];
    if (dev && dev->raw_create && dev->raw_sniff && (unsigned)*format < 32 && (dev->raw_formats & (1u << *format)) &&
        dev->raw_sniff(code, size) == *format)
      return dev;
  }
  for (int i = 0; i < RT_DEVICE_KINDS; i++) {
    const RtDevice *dev = devices[i];
    if (!dev || !dev->raw_create) continue;
    if (*format == LOOM_RAW_AUTO && dev->raw_sniff) {
      LoomRawFormat f = dev->raw_sniff(code, size);
      if (f == LOOM_RAW_AUTO) continue;
      *format = f;
    }
    if ((unsigned)*format < 32 && (dev->raw_formats & (1u << *format))) return dev;
  }
  return NULL;
}

const char *rt_device_kinds(char *buf, size_t cap) {
  size_t n = 0;
  if (cap) buf[0] = 0;
  for (int i = 0; i < RT_DEVICE_KINDS && n < cap; i++)
    if (devices[i]) n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", devices[i]->name);
  return buf;
}

const char *rt_device_label(char *buf, size_t cap, LoomDeviceKind kind, int32_t index) {
  const RtDevice *dev = rt_device(kind);
  if (dev) snprintf(buf, cap, "%s:%d", dev->name, (int)index);
  else snprintf(buf, cap, "device kind %d:%d", (int)kind, (int)index);
  return buf;
}

RtDeviceSlot *rt_device_slot(LoomContext *ctx, LoomDeviceKind kind) {
  return ctx && ctx->rt && (unsigned)kind < RT_DEVICE_KINDS ? &ctx->rt->devices[kind] : NULL;
}

double rt_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void rt_count_host_copy(LoomContext *ctx, bool to_host, size_t bytes) {
  if (!ctx || !ctx->rt) return;
  RtState *rt = ctx->rt;
  pthread_mutex_lock(&rt->stats_lock);
  if (to_host) {
    rt->stats.copies_to_host++;
    rt->stats.bytes_to_host += bytes;
  } else {
    rt->stats.copies_to_device++;
    rt->stats.bytes_to_device += bytes;
  }
  pthread_mutex_unlock(&rt->stats_lock);
}

void rt_count_launches(LoomContext *ctx, uint64_t launched, uint64_t temp_bytes) {
  RtState *rt = ctx->rt;
  pthread_mutex_lock(&rt->stats_lock);
  rt->stats.kernels_launched += launched;
  rt->stats.last_eval_kernels = launched;
  if (temp_bytes > rt->stats.temp_bytes_peak) rt->stats.temp_bytes_peak = temp_bytes;
  pthread_mutex_unlock(&rt->stats_lock);
}

KernelIr *rt_specialize_copy(Arena *a, SchedKernel *sk, Diag *d) {
  KernelIr *c = arena_alloc(a, sizeof *c);
  if (!c) {
    diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: specialized kernel %s", sk->ir->name);
    return NULL;
  }
  *c = *sk->ir;
  sk->ir = c;
  return c;
}
