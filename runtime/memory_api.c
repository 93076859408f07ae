/* SPDX-License-Identifier: Apache-2.0 */
/* memory_api.c: the public calls on device memory that are not arrays: pool figures, the pool's limit,
 * copies of raw bytes (loom_memcpy), synchronous or enqueued on a stream, and byte fills (loom_memset). Each
 * goes to the device table of the memory's kind (device.h); a copy between the host and a GPU is the GPU's,
 * two host pointers the host's.
 */
#include <string.h>

#include "runtime/device.h"

LOOM_API LoomStatus loom_pool_stats(LoomContext *ctx, LoomDeviceKind kind, int32_t index, LoomPoolStats *out) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!out) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_pool_stats: out is NULL");
    return ctx_report(ctx, &d);
  }
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_pool_stats", &d);
  RtPoolStats ps;
  if (!dev || dev->pool_stats(ctx, index, &ps, &d) != LOOM_OK) return ctx_report(ctx, &d);
  out->used_bytes = ps.used_bytes;
  out->total_bytes = ps.total_bytes;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_pool_cached_blocks(LoomContext *ctx, LoomDeviceKind kind, int32_t index, uint64_t *count) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!count) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_pool_cached_blocks: count is NULL");
    return ctx_report(ctx, &d);
  }
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_pool_cached_blocks", &d);
  RtPoolStats ps;
  memset(&ps, 0, sizeof ps);
  if (!dev || dev->pool_stats(ctx, index, &ps, &d) != LOOM_OK) return ctx_report(ctx, &d);
  *count = ps.cached_blocks;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_pool_free_all_blocks(LoomContext *ctx, LoomDeviceKind kind, int32_t index) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_pool_free_all_blocks", &d);
  if (!dev || dev->pool_trim(ctx, index, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_pool_set_limit(LoomContext *ctx, LoomDeviceKind kind, int32_t index, uint64_t limit) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_pool_set_limit", &d);
  if (dev && !dev->pool_limit) diag_error(&d, LOOM_ERR_UNSUPPORTED, "loom_pool_set_limit: %s pools have no limit", dev->name);
  if (d.status != LOOM_OK || dev->pool_limit(ctx, index, true, &limit, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_pool_get_limit(LoomContext *ctx, LoomDeviceKind kind, int32_t index, uint64_t *limit) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!limit) diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_pool_get_limit: limit is NULL");
  const RtDevice *dev = d.status == LOOM_OK ? rt_api_device(ctx, kind, index, "loom_pool_get_limit", &d) : NULL;
  if (dev && !dev->pool_limit) {
    *limit = 0;
    return LOOM_OK;
  }
  if (!dev || dev->pool_limit(ctx, index, false, limit, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_memset(LoomContext *ctx, void *dst, LoomDeviceKind kind, int32_t index, int value, size_t n,
                                LoomStream *s) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_memset", &d);
  if (!dev) return ctx_report(ctx, &d);
  if (value < 0 || value > 255)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_memset: value %d is not a byte (0-255)", value);
  else if (n && !dst)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_memset: NULL destination for %zu bytes", n);
  else if (s && (s->dev != dev || s->index != index)) {
    char want[32];
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_memset: the stream belongs to %s device %d, not to %s",
               s->dev->name, (int)s->index, rt_device_label(want, sizeof want, kind, index));
  }
  if (d.status != LOOM_OK) return ctx_report(ctx, &d);
  if (n == 0) return LOOM_OK;
  if (dev->fill_bytes(ctx, dst, index, (uint8_t)value, n, s ? s->s : NULL, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_memcpy(LoomContext *ctx, void *dst, LoomDeviceKind dk, int32_t di, const void *src,
                                LoomDeviceKind sk, int32_t si, size_t n, LoomStream *s, int async) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  const RtDevice *ddev = rt_api_device(ctx, dk, di, "loom_memcpy", &d);
  const RtDevice *sdev = ddev ? rt_api_device(ctx, sk, si, "loom_memcpy", &d) : NULL;
  if (!sdev) return ctx_report(ctx, &d);
  if (dk != LOOM_DEVICE_HOST && sk != LOOM_DEVICE_HOST && dk != sk)
    diag_error(&d, LOOM_ERR_UNSUPPORTED, "loom_memcpy: a copy between %s and %s memory goes through the host",
               ddev->name, sdev->name);
  else if (n && (!dst || !src))
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_memcpy: NULL %s pointer for %zu bytes", dst ? "source" : "destination", n);
  const RtDevice *dev = dk != LOOM_DEVICE_HOST ? ddev : sdev; /* the GPU's table; the host's for two host pointers */
  int index = dk != LOOM_DEVICE_HOST ? di : si;
  if (d.status == LOOM_OK && s && (s->dev != dev || s->index != index)) {
    char want[32];
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_memcpy: the stream belongs to %s device %d, not to %s",
               s->dev->name, (int)s->index, rt_device_label(want, sizeof want, dev->kind, index));
  }
  if (d.status != LOOM_OK) return ctx_report(ctx, &d);
  if (n == 0) return LOOM_OK;
  LoomStatus st;
  if (!s && !async) st = dev->copy(ctx, dst, dk, di, src, sk, si, n, &d);
  else {
    st = dev->copy_async(ctx, dst, dk, di, src, sk, si, n, s ? s->s : NULL, &d);
    if (st == LOOM_OK && !async && s->s) st = dev->stream_synchronize(ctx, s->s, &d);
  }
  return st == LOOM_OK ? LOOM_OK : ctx_report(ctx, &d);
}
