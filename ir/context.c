/* SPDX-License-Identifier: Apache-2.0 */
/* context.c: diagnostics, the pluggable allocator, the per-thread last error, arenas and StrBuf.
 *
 * Approach: every host allocation goes through ctx->alloc (sizes rounded up to 64 bytes so the
 * default aligned_alloc is always valid). The last error is the one mutable global Loom has: a
 * thread-local slot remembering which context it belongs to, so loom_last_error(ctx) on another
 * context (or thread) reads "". Arenas are linked lists of zeroed chunks; a request larger than a
 * quarter of the standard chunk gets its own chunk. StrBuf grows by doubling and latches `oom`.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

LoomStatus diag_error(Diag *d, LoomStatus status, const char *fmt, ...) {
  if (!d) return status;
  if (d->status != LOOM_OK) return d->status; /* first error wins */
  d->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  va_end(ap);
  return status;
}

/* ---- allocator ---------------------------------------------------------------------------------- */
static size_t round64(size_t n) {
  if (n == 0) n = 1;
  if (n > SIZE_MAX - 63) return 0;
  return (n + 63) & ~(size_t)63;
}

static void *default_alloc(void *user, size_t size) {
  (void)user;
  size_t r = round64(size);
  if (r == 0) return NULL;
  return aligned_alloc(64, r);
}

static void default_free(void *user, void *ptr) {
  (void)user;
  free(ptr);
}

static const LoomAllocator default_allocator = {default_alloc, default_free, NULL};

const LoomAllocator *ir_default_allocator(void) { return &default_allocator; }

void *ctx_alloc(LoomContext *ctx, size_t size) {
  size_t r = round64(size);
  if (r == 0) return NULL;
  if (!ctx || !ctx->alloc.alloc) return default_alloc(NULL, r);
  return ctx->alloc.alloc(ctx->alloc.user, r);
}

void *ctx_calloc(LoomContext *ctx, size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) return NULL;
  size_t total = n * size;
  void *p = ctx_alloc(ctx, total);
  if (p) memset(p, 0, total);
  return p;
}

void ctx_free(LoomContext *ctx, void *p) {
  if (!p) return;
  if (!ctx || !ctx->alloc.free) {
    default_free(NULL, p);
    return;
  }
  ctx->alloc.free(ctx->alloc.user, p);
}

/* ---- last error (the only mutable global: thread-local by design) ------------------------------- */
typedef struct LastError {
  const LoomContext *ctx;
  char msg[1024];
} LastError;

static _Thread_local LastError last_error;

LoomStatus ctx_report(LoomContext *ctx, const Diag *d) {
  if (!d) return LOOM_ERR_INTERNAL;
  if (d->status != LOOM_OK) {
    last_error.ctx = ctx;
    snprintf(last_error.msg, sizeof last_error.msg, "%s", d->msg);
  }
  return d->status;
}

const char *ctx_last_error(LoomContext *ctx) {
  if (ctx && last_error.ctx == ctx) return last_error.msg;
  return "";
}

/* ---- arena -------------------------------------------------------------------------------------- */
struct ArenaChunk {
  ArenaChunk *next;
  size_t size, used; /* bytes of data[] */
  _Alignas(16) unsigned char data[];
};

enum { ARENA_CHUNK = 64 * 1024 };

void arena_init(Arena *a, LoomContext *ctx) {
  a->ctx = ctx;
  a->head = NULL;
  a->next_chunk = 0;
}

void arena_init_small(Arena *a, LoomContext *ctx, size_t first) {
  arena_init(a, ctx);
  a->next_chunk = first < 256 ? 256 : first;
}

static ArenaChunk *arena_new_chunk(Arena *a, size_t size) {
  if (size > SIZE_MAX - sizeof(ArenaChunk) - 64) return NULL;
  ArenaChunk *c = ctx_alloc(a->ctx, sizeof(ArenaChunk) + size);
  if (!c) return NULL;
  c->size = size;
  c->used = 0;
  c->next = NULL;
  return c;
}

void *arena_alloc(Arena *a, size_t size) {
  if (!a) return NULL;
  if (size == 0) size = 1;
  if (size > SIZE_MAX - 15) return NULL;
  size = (size + 15) & ~(size_t)15;
  if (size > ARENA_CHUNK / 4) {
    /* A big request: its own chunk, linked behind the head so the head keeps filling. */
    ArenaChunk *c = arena_new_chunk(a, size);
    if (!c) return NULL;
    c->used = size;
    if (a->head) {
      c->next = a->head->next;
      a->head->next = c;
    } else {
      a->head = c;
    }
    memset(c->data, 0, size);
    return c->data;
  }
  if (!a->head || a->head->size - a->head->used < size) {
    size_t want = a->next_chunk && a->next_chunk < ARENA_CHUNK ? a->next_chunk : ARENA_CHUNK;
    while (want < size) want *= 2; /* size <= ARENA_CHUNK / 4 here */
    a->next_chunk = want * 2;
    ArenaChunk *c = arena_new_chunk(a, want);
    if (!c) return NULL;
    c->next = a->head;
    a->head = c;
  }
  void *p = a->head->data + a->head->used;
  a->head->used += size;
  memset(p, 0, size);
  return p;
}

char *arena_strdup(Arena *a, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s);
  char *p = arena_alloc(a, n + 1);
  if (p) memcpy(p, s, n + 1);
  return p;
}

void arena_free_all(Arena *a) {
  if (!a) return;
  ArenaChunk *c = a->head;
  while (c) {
    ArenaChunk *next = c->next;
    ctx_free(a->ctx, c);
    c = next;
  }
  a->head = NULL;
}

/* ---- StrBuf ------------------------------------------------------------------------------------- */
void sb_init(StrBuf *b, LoomContext *ctx) {
  b->ctx = ctx;
  b->s = NULL;
  b->len = b->cap = 0;
  b->oom = false;
}

static bool sb_reserve(StrBuf *b, size_t extra) {
  if (b->oom) return false;
  if (extra > SIZE_MAX / 2 - b->len) {
    b->oom = true;
    return false;
  }
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need) cap *= 2;
  char *s = ctx_alloc(b->ctx, cap);
  if (!s) {
    b->oom = true;
    return false;
  }
  if (b->s) {
    memcpy(s, b->s, b->len + 1);
    ctx_free(b->ctx, b->s);
  } else {
    s[0] = '\0';
  }
  b->s = s;
  b->cap = cap;
  return true;
}

void sb_printf(StrBuf *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->oom = true;
    return;
  }
  if (!sb_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

char *sb_take(StrBuf *b) {
  if (b->oom) {
    sb_free(b);
    return NULL;
  }
  if (!sb_reserve(b, 0)) {
    sb_free(b);
    return NULL;
  }
  char *s = b->s;
  b->s = NULL;
  b->len = b->cap = 0;
  return s;
}

void sb_free(StrBuf *b) {
  ctx_free(b->ctx, b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}
