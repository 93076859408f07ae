/* SPDX-License-Identifier: Apache-2.0 */
/* raw_kernel.c: CuPy's RawModule / RawKernel (loom_raw_* in loom.h), for any device kind that takes
 * whole kernels (device.h's raw_* hooks; the CUDA device's are runtime/cuda/cuda_raw.c).
 *
 * Approach. Creating a module hands the code to the device kind that takes its format (sniffed when
 * LOOM_RAW_AUTO), which compiles it to its loadable form without touching a device and lists the
 * kernel entries with their parameter lists. The driver is touched only at the first launch on a
 * device: the device loads the module there and looks the kernel up (once per function and device).
 * Arguments are checked against the entry's parameter list before any driver work, so argument
 * errors are the same on machines without a GPU; the launch packs them (8-byte slots) and the device
 * launches on the given driver stream or the calling thread's current stream.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"

#define RAW_MAX_DEVICES 64

struct LoomRawFunction {
  struct LoomRawFunction *next;
  LoomRawModule *m;
  char *name;
  int32_t nparams; /* -1: unknown (a binary not loaded yet) */
  CgRawParam *params;
  bool loaded[RAW_MAX_DEVICES];
  void *fn[RAW_MAX_DEVICES]; /* the device's kernel handle per device ordinal */
};

struct LoomRawModule {
  LoomContext *ctx;
  const RtDevice *dev; /* the kind that took the code */
  LoomRawFormat format;
  RtRawModule *dm;     /* the device's module */
  CgRawEntry *entries;
  int32_t nentries;    /* -1: unknown until loaded */
  pthread_mutex_t lock; /* guards dm's loads and the function list */
  LoomRawFunction *fns;
};

/* ---- helpers ----------------------------------------------------------------------------------- */
static char *dup_n(LoomContext *ctx, const char *s, size_t n) {
  char *p = ctx_alloc(ctx, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

/* ---- modules ----------------------------------------------------------------------------------- */
LOOM_API LoomRawFormat loom_raw_module_format(const LoomRawModule *m) { return m ? m->format : LOOM_RAW_AUTO; }

LOOM_API void loom_raw_module_destroy(LoomRawModule *m) {
  if (!m) return;
  LoomContext *ctx = m->ctx;
  for (LoomRawFunction *f = m->fns, *next; f; f = next) {
    next = f->next;
    ctx_free(ctx, f->name);
    ctx_free(ctx, f->params);
    ctx_free(ctx, f);
  }
  if (m->dm) m->dev->raw_destroy(ctx, m->dm);
  if (m->nentries > 0) cg_raw_entries_free(ctx, m->entries, m->nentries);
  pthread_mutex_destroy(&m->lock);
  ctx_free(ctx, m);
}

LOOM_API LoomStatus loom_raw_module_create(LoomContext *ctx, const void *code, size_t size, LoomRawFormat format,
                                           const char *const *options, int32_t noptions, LoomRawModule **out) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!out || !code || size == 0 || noptions < 0 || (noptions > 0 && !options)) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_raw_module_create: %s", !out ? "out is NULL"
                                              : (!code || !size) ? "the code is empty" : "options is NULL");
    return ctx_report(ctx, &d);
  }
  *out = NULL;
  if (format < LOOM_RAW_AUTO || format > LOOM_RAW_CUDA) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_raw_module_create: format %d is not a LoomRawFormat", (int)format);
    return ctx_report(ctx, &d);
  }
  const RtDevice *dev = rt_device_for_raw(&format, code, size);
  if (!dev) {
    diag_error(&d, LOOM_ERR_UNSUPPORTED, "loom_raw_module_create: no device of this build takes format %d",
               (int)format);
    return ctx_report(ctx, &d);
  }
  LoomRawModule *m = ctx_calloc(ctx, 1, sizeof *m);
  if (!m) {
    diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "loom_raw_module_create: out of memory");
    return ctx_report(ctx, &d);
  }
  m->ctx = ctx;
  m->dev = dev;
  m->format = format;
  pthread_mutex_init(&m->lock, NULL);
  if (dev->raw_create(ctx, code, size, format, options, noptions, &m->dm, &m->entries, &m->nentries, &d) != LOOM_OK) {
    loom_raw_module_destroy(m);
    return ctx_report(ctx, &d);
  }
  *out = m;
  return LOOM_OK;
}

static LoomStatus copy_string(LoomContext *ctx, const char *s, char **text, Diag *d) {
  *text = dup_n(ctx, s, strlen(s));
  return *text ? LOOM_OK : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory copying a string");
}

LOOM_API LoomStatus loom_raw_module_ptx(LoomRawModule *m, char **text) {
  if (!m) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!text) diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_raw_module_ptx: text is NULL");
  else if (!m->dev->raw_text || !m->dev->raw_text(m->dm))
    diag_error(&d, LOOM_ERR_UNSUPPORTED, "loom_raw_module_ptx: the module was given as a binary: it has no PTX");
  else copy_string(m->ctx, m->dev->raw_text(m->dm), text, &d);
  return d.status == LOOM_OK ? LOOM_OK : ctx_report(m->ctx, &d);
}

LOOM_API LoomStatus loom_raw_module_kernels(LoomRawModule *m, char **text) {
  if (!m) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!text) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_raw_module_kernels: text is NULL");
    return ctx_report(m->ctx, &d);
  }
  size_t n = 1;
  for (int32_t i = 0; i < m->nentries; i++) n += strlen(m->entries[i].name) + 1;
  char *s = ctx_alloc(m->ctx, n);
  if (!s) {
    diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "loom_raw_module_kernels: out of memory");
    return ctx_report(m->ctx, &d);
  }
  size_t k = 0;
  for (int32_t i = 0; i < m->nentries; i++) k += (size_t)sprintf(s + k, "%s\n", m->entries[i].name);
  s[k] = 0;
  *text = s;
  return LOOM_OK;
}

/* The entry for name: exact, else the single "_Z<len><name>" mangled one. NULL when none. */
static const CgRawEntry *find_entry(const LoomRawModule *m, const char *name, Diag *d) {
  for (int32_t i = 0; i < m->nentries; i++)
    if (!strcmp(m->entries[i].name, name)) return &m->entries[i];
  char prefix[300];
  snprintf(prefix, sizeof prefix, "_Z%zu%s", strlen(name), name);
  size_t pl = strlen(prefix);
  const CgRawEntry *found = NULL;
  int hits = 0;
  for (int32_t i = 0; i < m->nentries; i++)
    if (!strncmp(m->entries[i].name, prefix, pl)) {
      found = &m->entries[i];
      hits++;
    }
  if (hits == 1) return found;
  char list[600] = "";
  size_t k = 0;
  for (int32_t i = 0; i < m->nentries && k + 1 < sizeof list; i++) {
    int w = snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", m->entries[i].name);
    if (w < 0) break;
    k += (size_t)w;
  }
  if (hits > 1)
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: '%s' names %d overloads or template instances (%s): give the "
                                             "mangled name", name, hits, list);
  else
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: no kernel named '%s' (the module has: %s)", name, list);
  return NULL;
}

LOOM_API LoomStatus loom_raw_module_get_function(LoomRawModule *m, const char *name, LoomRawFunction **out) {
  if (!m) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!name || !*name || !out) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_raw_module_get_function: %s", !out ? "out is NULL" : "empty name");
    return ctx_report(m->ctx, &d);
  }
  *out = NULL;
  const CgRawEntry *e = NULL;
  if (m->nentries >= 0 && !(e = find_entry(m, name, &d))) return ctx_report(m->ctx, &d);
  const char *real = e ? e->name : name;
  pthread_mutex_lock(&m->lock);
  LoomRawFunction *f = m->fns;
  while (f && strcmp(f->name, real)) f = f->next;
  if (!f) {
    f = ctx_calloc(m->ctx, 1, sizeof *f);
    if (f) f->name = dup_n(m->ctx, real, strlen(real));
    if (f && e && e->nparams) {
      f->params = ctx_calloc(m->ctx, (size_t)e->nparams, sizeof *f->params);
      if (f->params) memcpy(f->params, e->params, (size_t)e->nparams * sizeof *e->params);
    }
    if (!f || !f->name || (e && e->nparams && !f->params)) {
      if (f) {
        ctx_free(m->ctx, f->name);
        ctx_free(m->ctx, f);
      }
      pthread_mutex_unlock(&m->lock);
      diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "loom_raw_module_get_function: out of memory");
      return ctx_report(m->ctx, &d);
    }
    f->m = m;
    f->nparams = e ? e->nparams : -1;
    f->next = m->fns;
    m->fns = f;
  }
  pthread_mutex_unlock(&m->lock);
  *out = f;
  return LOOM_OK;
}

LOOM_API const char *loom_raw_function_name(const LoomRawFunction *f) { return f ? f->name : ""; }

LOOM_API LoomStatus loom_raw_function_params(LoomRawFunction *f, int32_t *nparams, LoomRawParamKind *kinds,
                                             int32_t *sizes, int32_t cap) {
  if (!f || !nparams) return LOOM_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&f->m->lock);
  *nparams = f->nparams;
  for (int32_t i = 0; i < f->nparams && i < cap; i++) {
    if (kinds) kinds[i] = (LoomRawParamKind)f->params[i].kind;
    if (sizes) sizes[i] = f->params[i].size;
  }
  pthread_mutex_unlock(&f->m->lock);
  return LOOM_OK;
}

/* ---- launching --------------------------------------------------------------------------------- */

static const char *kind_text(int kind) {
  switch (kind) {
  case CG_RAW_POINTER: return "a pointer";
  case CG_RAW_INT: return "an integer";
  case CG_RAW_FLOAT: return "a floating-point scalar";
  case CG_RAW_INT_OR_POINTER: return "a pointer or 64-bit integer";
  default: return "a value";
  }
}

/* Checks args against f's parameter list (when known) and the arrays' device. */
static LoomStatus check_args(const LoomRawFunction *f, int32_t nargs, const LoomRawArg *args, int *device, Diag *d) {
  if (nargs < 0 || (nargs > 0 && !args))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s': args is NULL", f->name);
  if (nargs > CG_RAW_MAX_PARAMS)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s': %d arguments; at most %d", f->name, (int)nargs,
                      CG_RAW_MAX_PARAMS);
  if (f->nparams >= 0 && nargs != f->nparams)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s' takes %d argument%s, got %d", f->name,
                      (int)f->nparams, f->nparams == 1 ? "" : "s", (int)nargs);
  for (int32_t i = 0; i < nargs; i++) {
    const LoomRawArg *a = &args[i];
    size_t size;
    if (a->kind == LOOM_RAW_ARG_ARRAY) {
      if (!a->array) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s' argument %d: the array is NULL", f->name, (int)i);
      const char *kind = f->m->dev->name;
      if (a->array->device != f->m->dev->kind) {
        char lb[32];
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s' argument %d is a %s array: raw kernels take %s "
                                                        "device arrays", f->name, (int)i,
                          a->array->device == LOOM_DEVICE_HOST ? "host"
                                                               : rt_device_label(lb, sizeof lb, a->array->device, a->array->device_index),
                          kind);
      }
      if (*device >= 0 && a->array->device_index != *device)
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s' argument %d is on %s device %d, an earlier one on "
                                                        "device %d: all arrays of a launch must be on one device",
                          f->name, (int)i, kind, (int)a->array->device_index, *device);
      *device = a->array->device_index;
      size = 8;
    } else if (a->kind == LOOM_RAW_ARG_SCALAR) {
      size = loom_dtype_size(a->dtype);
      if (!size) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s' argument %d: dtype %d is not a LoomDType", f->name, (int)i, (int)a->dtype);
    } else if (a->kind == LOOM_RAW_ARG_BYTES) {
      size = a->nbytes;
      if (!a->bytes || !size)
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s' argument %d: a by-value argument of no bytes", f->name, (int)i);
    } else {
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s' argument %d: kind %d is not a LoomRawArgKind", f->name, (int)i, (int)a->kind);
    }
    if (f->nparams < 0) continue;
    const CgRawParam *p = &f->params[i];
    bool arr = a->kind == LOOM_RAW_ARG_ARRAY, raw = a->kind == LOOM_RAW_ARG_BYTES;
    bool isf = !arr && !raw && (dtype_is_float(a->dtype) || dtype_is_complex(a->dtype));
    bool ok;
    if (raw) ok = p->kind != CG_RAW_POINTER && (int32_t)size == p->size; /* a struct's bytes: any same-size value */
    else switch (p->kind) {
    case CG_RAW_POINTER: ok = arr; break;
    case CG_RAW_INT: ok = !arr && !isf && (int32_t)size == p->size; break;
    case CG_RAW_FLOAT: ok = !arr && isf && !dtype_is_complex(a->dtype) && (int32_t)size == p->size; break;
    case CG_RAW_INT_OR_POINTER: ok = arr || (!isf && size == 8); break;
    default: ok = (int32_t)size == p->size; break;
    }
    if (!ok) {
      char got[64];
      if (arr) snprintf(got, sizeof got, "an array");
      else if (raw) snprintf(got, sizeof got, "a by-value struct of %zu bytes", size);
      else snprintf(got, sizeof got, "a %s scalar (%zu bytes)", loom_dtype_name(a->dtype), size);
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s' argument %d: the parameter is %s of %d bytes, got %s",
                        f->name, (int)i, kind_text(p->kind), (int)p->size, got);
    }
  }
  return LOOM_OK;
}

/* The argument's bytes as the kernel receives them, into a 16-byte slot. */
static void scalar_bytes(const LoomRawArg *a, uint64_t slot[2]) {
  slot[0] = slot[1] = 0;
  switch (a->dtype) {
  case LOOM_COMPLEX64: { float v[2] = {(float)a->value.c[0], (float)a->value.c[1]}; memcpy(slot, v, 8); break; }
  case LOOM_COMPLEX128: memcpy(slot, a->value.c, 16); break;
  case LOOM_BOOL: { uint8_t v = a->value.i != 0; memcpy(slot, &v, 1); break; }
  case LOOM_INT8: { int8_t v = (int8_t)a->value.i; memcpy(slot, &v, 1); break; }
  case LOOM_INT16: { int16_t v = (int16_t)a->value.i; memcpy(slot, &v, 2); break; }
  case LOOM_INT32: { int32_t v = (int32_t)a->value.i; memcpy(slot, &v, 4); break; }
  case LOOM_INT64: memcpy(slot, &a->value.i, 8); break;
  case LOOM_UINT8: { uint8_t v = (uint8_t)a->value.u; memcpy(slot, &v, 1); break; }
  case LOOM_UINT16: { uint16_t v = (uint16_t)a->value.u; memcpy(slot, &v, 2); break; }
  case LOOM_UINT32: { uint32_t v = (uint32_t)a->value.u; memcpy(slot, &v, 4); break; }
  case LOOM_UINT64: memcpy(slot, &a->value.u, 8); break;
  case LOOM_FLOAT16: { _Float16 v = (_Float16)a->value.f; memcpy(slot, &v, 2); break; }
  case LOOM_FLOAT32: { float v = (float)a->value.f; memcpy(slot, &v, 4); break; }
  case LOOM_BFLOAT16: { /* float32 rounded to nearest even in its upper 16 bits */
    float f = (float)a->value.f;
    uint32_t w;
    memcpy(&w, &f, 4);
    uint16_t v = f != f ? (uint16_t)((w >> 16) | 0x40) : (uint16_t)((w + 0x7fff + ((w >> 16) & 1)) >> 16);
    memcpy(slot, &v, 2);
    break;
  }
  default: memcpy(slot, &a->value.f, 8); break;
  }
}

/* The device's module and f's kernel there (loaded on first use). Called with m->lock held. */
static LoomStatus prepare_locked(LoomRawFunction *f, int device, Diag *d) {
  LoomRawModule *m = f->m;
  if (device < 0 || device >= RAW_MAX_DEVICES)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s device %d is out of range", m->dev->name, device);
  if (f->loaded[device]) return LOOM_OK;
  CgRawParam *params = NULL;
  int32_t nparams = f->nparams;
  LoomStatus st = m->dev->raw_load(m->ctx, m->dm, device, f->name, &f->fn[device], &params, &nparams, d);
  if (st != LOOM_OK) return st;
  f->loaded[device] = true;
  if (f->nparams < 0 && params) { /* a binary: the loaded code knows the sizes */
    f->params = params;
    f->nparams = nparams;
  }
  return LOOM_OK;
}

static LoomStatus launch(LoomRawFunction *f, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_mem,
                         bool use_current, void *stream, int device, int32_t nargs, const LoomRawArg *args, Diag *d) {
  LoomRawModule *m = f->m;
  if (!grid || !block)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s': grid and block must be given (3 entries each)", f->name);
  for (int i = 0; i < 3; i++)
    if (!grid[i] || !block[i])
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s': grid (%u, %u, %u) and block (%u, %u, %u) must be "
                                                      ">= 1 in every dimension", f->name, grid[0], grid[1], grid[2],
                        block[0], block[1], block[2]);
  int dev = -1;
  pthread_mutex_lock(&m->lock);
  LoomStatus st = check_args(f, nargs, args, &dev, d);
  if (dev < 0) dev = device >= 0 ? device : 0;
  else if (device >= 0 && device != dev)
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "kernel '%s': the arrays are on %s device %d, the launch names "
                                                  "device %d", f->name, m->dev->name, dev, device);
  if (st == LOOM_OK) st = prepare_locked(f, dev, d);
  if (st == LOOM_OK && f->nparams >= 0) st = check_args(f, nargs, args, &(int){-1}, d); /* a binary's, now known */
  void *fn = st == LOOM_OK ? f->fn[dev] : NULL;
  pthread_mutex_unlock(&m->lock);
  if (st != LOOM_OK) return st;
  uint64_t slots[CG_RAW_MAX_PARAMS][2] __attribute__((aligned(16))); /* complex128 takes 16 bytes */
  void *params[CG_RAW_MAX_PARAMS];
  for (int32_t i = 0; i < nargs; i++) {
    if (args[i].kind == LOOM_RAW_ARG_ARRAY) slots[i][0] = (uint64_t)(uintptr_t)args[i].array->data;
    else if (args[i].kind == LOOM_RAW_ARG_SCALAR) scalar_bytes(&args[i], slots[i]);
    /* BYTES: the driver copies the parameter's size from the caller's buffer at the launch */
    params[i] = args[i].kind == LOOM_RAW_ARG_BYTES ? (void *)(uintptr_t)args[i].bytes : (void *)&slots[i];
  }
  if (use_current) stream = m->dev->stream_handle(m->dev->current_stream(m->ctx, dev));
  return m->dev->raw_launch(m->ctx, m->dm, fn, dev, grid, block, shared_mem, stream, nargs ? params : NULL, f->name, d);
}

LOOM_API LoomStatus loom_raw_function_launch(LoomRawFunction *f, const uint32_t grid[3], const uint32_t block[3],
                                             uint32_t shared_mem, LoomStream *s, int32_t nargs,
                                             const LoomRawArg *args) {
  if (!f) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = launch(f, grid, block, shared_mem, s == NULL, s ? loom_stream_handle(s) : NULL, -1, nargs, args, &d);
  return st == LOOM_OK ? LOOM_OK : ctx_report(f->m->ctx, &d);
}

LOOM_API LoomStatus loom_raw_function_launch_on(LoomRawFunction *f, const uint32_t grid[3],
                                                const uint32_t block[3], uint32_t shared_mem, void *cuda_stream,
                                                int32_t device, int32_t nargs, const LoomRawArg *args) {
  if (!f) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = launch(f, grid, block, shared_mem, false, cuda_stream, device, nargs, args, &d);
  return st == LOOM_OK ? LOOM_OK : ctx_report(f->m->ctx, &d);
}

/* ---- driver handles ------------------------------------------------------------------------------ */
LOOM_API LoomStatus loom_raw_function_handle(LoomRawFunction *f, int32_t device, void **handle) {
  if (!f) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!handle) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_raw_function_handle: handle is NULL");
    return ctx_report(f->m->ctx, &d);
  }
  *handle = NULL;
  pthread_mutex_lock(&f->m->lock);
  LoomStatus st = prepare_locked(f, device, &d);
  if (st == LOOM_OK) *handle = f->fn[device];
  pthread_mutex_unlock(&f->m->lock);
  return st == LOOM_OK ? LOOM_OK : ctx_report(f->m->ctx, &d);
}

LOOM_API LoomStatus loom_raw_module_global(LoomRawModule *m, const char *name, int32_t device, void **ptr,
                                           size_t *bytes) {
  if (!m) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!name || !*name || !ptr || !bytes) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_raw_module_global: %s", !name || !*name ? "empty name" : "NULL output");
    return ctx_report(m->ctx, &d);
  }
  *ptr = NULL;
  *bytes = 0;
  if (!m->dev->raw_global) {
    diag_error(&d, LOOM_ERR_UNSUPPORTED, "RawModule.get_global: %s modules have no global variables to give", m->dev->name);
    return ctx_report(m->ctx, &d);
  }
  if (device < 0 || device >= RAW_MAX_DEVICES) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s device %d is out of range", m->dev->name, (int)device);
    return ctx_report(m->ctx, &d);
  }
  pthread_mutex_lock(&m->lock);
  LoomStatus st = m->dev->raw_global(m->ctx, m->dm, device, name, ptr, bytes, &d);
  pthread_mutex_unlock(&m->lock);
  return st == LOOM_OK ? LOOM_OK : ctx_report(m->ctx, &d);
}
