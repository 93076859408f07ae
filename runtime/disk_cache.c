/* SPDX-License-Identifier: Apache-2.0 */
/* disk_cache.c: the content-addressed disk cache of compiled binaries (contract in disk_cache.h).
 *
 * Approach: the file name is a 128-bit hash of the key text (two seeded FNV-1a passes, each
 * finished by a 64-bit mixer); the first two hex digits name the shard folder. The file holds a
 * 40-byte little-endian header, the key and the payload; the checksum (FNV-1a 64 over key then
 * payload) changes for any single changed byte, since every FNV step is a bijection of its state.
 * A store writes a mkstemp() file beside the entry and renames it over the entry, so concurrent
 * writers of one key each replace the entry whole and the last rename wins. Eviction scans the
 * shards (on the first store, when the estimated size passes the cap, and every DC_RESCAN_STORES
 * stores: a scan stats every entry, and host kernels make thousands), sorts the entries by mtime and
 * deletes the oldest until the total fits the cap. Nothing is fsync()ed: a
 * crash can leave a short or zeroed entry, which the next read detects and deletes. Reads open the
 * shard folder and then the entry relative to it, never following a link and never blocking; a
 * store checks RLIMIT_FSIZE before it writes (see disk_cache.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdatomic.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "runtime/disk_cache.h"

enum {
  DC_HEADER_BYTES = 40,
  DC_FORMAT_VERSION = 1,
  DC_NAME_HEX = 32,        /* 128-bit hash */
  DC_PATH_MAX = 4096,
  DC_TMP_MAX_AGE_S = 3600, /* temporary files older than this were left by a crashed writer */
};
static const unsigned char dc_magic[8] = {'L', 'O', 'O', 'M', 'B', 'I', 'N', 0x1a};
#define DC_DEFAULT_MAX_BYTES ((uint64_t)1 << 30)

/* A scan of the folder stats every entry, so a store does not scan: the cache keeps an estimate of the
 * folder's size (the last scan's total plus this object's stores since) and scans and trims when the
 * estimate passes the cap, on its first store, and every DC_RESCAN_STORES stores (other processes write
 * into the folder too; until then their entries are not counted here). */
#define DC_RESCAN_STORES 256

struct DiskCache {
  LoomContext *ctx;
  bool enabled;
  uint64_t max_bytes;
  long (*write_fn)(int fd, const void *p, size_t n);
  _Atomic uint64_t estimate; /* bytes in the folder as far as this object knows */
  _Atomic uint64_t stores;   /* stores since the last scan (0: none yet: the first store scans) */
  _Atomic bool scanned;
  char dir[DC_PATH_MAX];
};

static long sys_write(int fd, const void *p, size_t n) { return (long)write(fd, p, n); }

/* ---- hashing ----------------------------------------------------------------------------------- */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint64_t mix64(uint64_t x) { /* the splitmix64 finalizer: a bijection that spreads bits */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

static const uint64_t dc_basis = 0xcbf29ce484222325ull;

static void key_name(const char *key, char out[DC_NAME_HEX + 1]) {
  size_t n = strlen(key);
  uint64_t a = mix64(fnv1a(dc_basis, key, n) ^ n);
  uint64_t b = mix64(fnv1a(dc_basis ^ 0x5bd1e9955bd1e995ull, key, n) + 0x9e3779b97f4a7c15ull);
  snprintf(out, DC_NAME_HEX + 1, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
}

static uint64_t entry_checksum(const void *key, size_t klen, const void *payload, size_t plen) {
  uint64_t h = fnv1a(dc_basis, key, klen);
  return fnv1a(h, payload, plen);
}

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* ---- small file helpers ------------------------------------------------------------------------- */
static bool write_all(const DiskCache *c, int fd, const void *p, size_t n) {
  const char *s = p;
  while (n > 0) {
    long w = c->write_fn(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w == 0) errno = ENOSPC; /* no progress: as good as a full disk */
    if (w <= 0) return false;
    s += w;
    n -= (size_t)w;
  }
  return true;
}

static bool read_all(int fd, void *p, size_t n) {
  char *s = p;
  while (n > 0) {
    ssize_t r = read(fd, s, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    s += r;
    n -= (size_t)r;
  }
  return true;
}

/* snprintf into a path buffer; false when the result would not fit (the caller skips or fails). */
static bool pathf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool pathf(char *buf, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vsnprintf(buf, n, fmt, ap);
  va_end(ap);
  return r >= 0 && (size_t)r < n;
}

/* mkdir -p with mode 0700 for every folder it creates. path is modified temporarily. */
static int mkdirs(char *path) {
  for (char *s = path + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    int r = mkdir(path, 0700);
    int e = errno;
    *s = '/';
    if (r != 0 && e != EEXIST) return e;
  }
  if (mkdir(path, 0700) != 0 && errno != EEXIST) return errno;
  return 0;
}

/* ---- opening ------------------------------------------------------------------------------------ */
static LoomStatus parse_bytes(const char *s, uint64_t *out, Diag *d) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  uint64_t mul = 1;
  if (end && (*end == 'K' || *end == 'k')) mul = 1ull << 10, end++;
  else if (end && (*end == 'M' || *end == 'm')) mul = 1ull << 20, end++;
  else if (end && (*end == 'G' || *end == 'g')) mul = 1ull << 30, end++;
  if (errno || end == s || !end || *end != '\0' || s[0] == '-' || v == 0 || v > UINT64_MAX / mul)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "LOOM_CACHE_MAX_BYTES='%s' is not a positive byte count: write e.g. 1073741824, "
                      "512M or 2G",
                      s);
  *out = (uint64_t)v * mul;
  return LOOM_OK;
}

LoomStatus rt_disk_cache_open(LoomContext *ctx, const DiskCacheOptions *options, DiskCache **out,
                              Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_disk_cache_open: out is NULL");
  *out = NULL;
  DiskCache *c = ctx_calloc(ctx, 1, sizeof *c);
  if (!c) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory opening the disk cache");
  c->ctx = ctx;
  c->write_fn = options && options->write_fn ? options->write_fn : sys_write;
  LoomStatus st = LOOM_OK;

  c->max_bytes = options ? options->max_bytes : 0;
  if (c->max_bytes == 0) {
    const char *m = getenv("LOOM_CACHE_MAX_BYTES");
    c->max_bytes = DC_DEFAULT_MAX_BYTES;
    if (m && *m && (st = parse_bytes(m, &c->max_bytes, d)) != LOOM_OK) goto fail;
  }

  const char *dir = options ? options->dir : NULL;
  const char *suffix = "";
  if (!dir) dir = getenv("LOOM_CACHE_DIR");
  if (!dir) {
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') { /* the XDG spec ignores relative paths */
      dir = xdg;
      suffix = "/loom";
    } else {
      dir = getenv("HOME");
      suffix = "/.cache/loom";
      if (!dir || !*dir) {
        st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                        "no folder for the kernel cache: set LOOM_CACHE_DIR (or HOME, or "
                        "XDG_CACHE_HOME), or set LOOM_CACHE_DIR= (empty) to disable it");
        goto fail;
      }
    }
  }
  if (!*dir) { /* disabled */
    *out = c;
    return LOOM_OK;
  }
  int n = snprintf(c->dir, sizeof c->dir, "%s%s", dir, suffix);
  if (n < 0 || (size_t)n + 2 + 1 + DC_NAME_HEX + 16 >= sizeof c->dir) {
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "the kernel cache folder path '%s%s' is too long",
                    dir, suffix);
    goto fail;
  }
  while (n > 1 && c->dir[n - 1] == '/') c->dir[--n] = '\0';
  int e = mkdirs(c->dir);
  if (e != 0) {
    st = diag_error(d, LOOM_ERR_BACKEND,
                    "cannot create the kernel cache folder %s: %s (set LOOM_CACHE_DIR to a writable "
                    "folder, or LOOM_CACHE_DIR= to disable the cache)",
                    c->dir, strerror(e));
    goto fail;
  }
  struct stat sb;
  if (stat(c->dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    st = diag_error(d, LOOM_ERR_BACKEND, "the kernel cache path %s is not a folder: set LOOM_CACHE_DIR",
                    c->dir);
    goto fail;
  }
  if (sb.st_uid != geteuid()) {
    st = diag_error(d, LOOM_ERR_BACKEND,
                    "the kernel cache folder %s belongs to another user: set LOOM_CACHE_DIR to a "
                    "folder of your own",
                    c->dir);
    goto fail;
  }
  if ((sb.st_mode & 0777) != 0700 && chmod(c->dir, 0700) != 0) {
    st = diag_error(d, LOOM_ERR_BACKEND, "cannot set mode 0700 on the kernel cache folder %s: %s",
                    c->dir, strerror(errno));
    goto fail;
  }
  c->enabled = true;
  *out = c;
  return LOOM_OK;
fail:
  ctx_free(ctx, c);
  return st;
}

void rt_disk_cache_close(DiskCache *c) {
  if (c) ctx_free(c->ctx, c);
}

bool rt_disk_cache_enabled(const DiskCache *c) { return c && c->enabled; }
const char *rt_disk_cache_dir(const DiskCache *c) { return c && c->enabled ? c->dir : ""; }
uint64_t rt_disk_cache_max_bytes(const DiskCache *c) { return c ? c->max_bytes : 0; }
void rt_disk_cache_free(DiskCache *c, void *data) { ctx_free(c ? c->ctx : NULL, data); }

bool rt_disk_cache_entry_path(const DiskCache *c, const char *key, char *buf, size_t bufsize) {
  if (!c || !c->enabled || !key || !buf) return false;
  char name[DC_NAME_HEX + 1];
  key_name(key, name);
  int n = snprintf(buf, bufsize, "%s/%.2s/%s", c->dir, name, name);
  return n > 0 && (size_t)n < bufsize;
}

/* ---- load -------------------------------------------------------------------------------------- */
/* Deletes a bad entry (shard folder dfd, file name), unless a writer has replaced it since we opened
 * it. Never a folder. */
static void drop_entry(int dfd, const char *name, int fd) {
  struct stat a, b;
  if (fstat(fd, &a) == 0 && fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
      a.st_dev == b.st_dev && !S_ISDIR(b.st_mode))
    unlinkat(dfd, name, 0);
}

/* Opens the shard folder of `name` (its first two hex digits): a real folder (no link followed) of
 * this user, or -1. */
static int open_shard(const DiskCache *c, const char *name) {
  char path[DC_PATH_MAX];
  if (!pathf(path, sizeof path, "%s/%.2s", c->dir, name)) return -1;
  int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat sb;
  if (dfd >= 0 && (fstat(dfd, &sb) != 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid())) {
    close(dfd);
    return -1;
  }
  return dfd;
}

LoomStatus rt_disk_cache_load(DiskCache *c, const char *key, void **data, size_t *size, bool *hit,
                              Diag *d) {
  if (!c || !key || !data || !size || !hit)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_disk_cache_load: NULL argument");
  *data = NULL;
  *size = 0;
  *hit = false;
  if (!c->enabled) return LOOM_OK;
  char name[DC_NAME_HEX + 1];
  key_name(key, name);
  int dfd = open_shard(c, name);
  if (dfd < 0) return LOOM_OK; /* no shard (or not a real folder of ours): a miss */
  /* no link followed, no blocking open (a FIFO planted here must not hang the loader) */
  int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) unlinkat(dfd, name, 0); /* a symbolic link: removed, the next store rewrites it */
    close(dfd);
    return LOOM_OK; /* missing (or unreadable): a miss */
  }
  size_t klen = strlen(key);
  unsigned char h[DC_HEADER_BYTES];
  char *kbuf = NULL;
  void *payload = NULL;
  LoomStatus st = LOOM_OK;
  struct stat sb;
  bool ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= DC_HEADER_BYTES &&
            read_all(fd, h, sizeof h) && memcmp(h, dc_magic, sizeof dc_magic) == 0 &&
            get_u32(h + 8) == DC_FORMAT_VERSION && get_u64(h + 16) == klen;
  uint64_t plen = ok ? get_u64(h + 24) : 0;
  /* The file's size must be exactly header + key + payload (no overflow: klen is a string length). */
  ok = ok && plen <= (uint64_t)sb.st_size && (uint64_t)sb.st_size - DC_HEADER_BYTES - klen == plen &&
       (uint64_t)sb.st_size >= DC_HEADER_BYTES + klen && plen <= SIZE_MAX;
  if (ok) {
    kbuf = ctx_alloc(c->ctx, klen + 1);
    payload = ctx_alloc(c->ctx, plen ? (size_t)plen : 1);
    if (!kbuf || !payload) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY,
                      "out of host memory reading a %llu-byte kernel cache entry",
                      (unsigned long long)plen);
      goto done;
    }
    ok = read_all(fd, kbuf, klen) && read_all(fd, payload, (size_t)plen);
  }
  if (ok && memcmp(kbuf, key, klen) != 0) ok = false; /* another key with the same hash */
  if (ok && entry_checksum(kbuf, klen, payload, (size_t)plen) != get_u64(h + 32)) ok = false;
  if (!ok) {
    drop_entry(dfd, name, fd);
    goto done;
  }
  futimens(fd, NULL); /* touch: least recently used eviction goes by mtime */
  *data = payload;
  payload = NULL;
  *size = (size_t)plen;
  *hit = true;
done:
  close(fd);
  close(dfd);
  ctx_free(c->ctx, kbuf);
  ctx_free(c->ctx, payload);
  return st;
}

/* ---- store ------------------------------------------------------------------------------------- */
LoomStatus rt_disk_cache_store(DiskCache *c, const char *key, const void *data, size_t size, Diag *d) {
  if (!c || !key || (!data && size))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_disk_cache_store: NULL argument");
  if (!c->enabled) return LOOM_OK;
  size_t klen = strlen(key);
  if ((uint64_t)size > c->max_bytes || (uint64_t)klen + DC_HEADER_BYTES > c->max_bytes - size)
    return LOOM_OK; /* would never fit under the cap */
  char name[DC_NAME_HEX + 1];
  key_name(key, name);
  char path[DC_PATH_MAX], tmp[DC_PATH_MAX];
  if (!pathf(path, sizeof path, "%s/%.2s", c->dir, name) ||
      !pathf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", path))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "the kernel cache path %s is too long", c->dir);
  if (mkdir(path, 0700) != 0 && errno != EEXIST)
    return diag_error(d, LOOM_ERR_BACKEND, "cannot create the kernel cache folder %s: %s", path,
                      strerror(errno));
  int dfd = open_shard(c, name);
  if (dfd < 0)
    return diag_error(d, LOOM_ERR_BACKEND, "the kernel cache shard %s is not a folder of this user (a link?)", path);
  close(dfd);
  /* The process's file size limit: a write past it raises SIGXFSZ, which kills by default. */
  uint64_t total = (uint64_t)DC_HEADER_BYTES + klen + size;
  struct rlimit fl;
  if (getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY && total > (uint64_t)fl.rlim_cur)
    return diag_error(d, LOOM_ERR_BACKEND,
                      "not storing a %llu-byte kernel cache entry: the file size limit (ulimit -f) is %llu bytes",
                      (unsigned long long)total, (unsigned long long)fl.rlim_cur);
  size_t plen0 = strlen(path);
  if (!pathf(path + plen0, sizeof path - plen0, "/%s", name))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "the kernel cache path %s is too long", c->dir);
  int fd = mkstemp(tmp); /* mode 0600, unique name */
  if (fd < 0)
    return diag_error(d, LOOM_ERR_BACKEND, "cannot create a file in the kernel cache folder %s: %s",
                      c->dir, strerror(errno));
  unsigned char h[DC_HEADER_BYTES];
  memcpy(h, dc_magic, sizeof dc_magic);
  put_u32(h + 8, DC_FORMAT_VERSION);
  put_u32(h + 12, 0);
  put_u64(h + 16, klen);
  put_u64(h + 24, size);
  put_u64(h + 32, entry_checksum(key, klen, data, size));
  bool ok = write_all(c, fd, h, sizeof h) && write_all(c, fd, key, klen) && write_all(c, fd, data, size);
  int e = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    ok = false;
    e = errno;
  }
  if (!ok) {
    unlink(tmp);
    return diag_error(d, LOOM_ERR_BACKEND, "cannot write the kernel cache entry %s: %s", path,
                      strerror(e));
  }
  uint64_t est = atomic_fetch_add(&c->estimate, total) + total;
  uint64_t stores = atomic_fetch_add(&c->stores, 1) + 1;
  if (atomic_load(&c->scanned) && est <= c->max_bytes && stores < DC_RESCAN_STORES) return LOOM_OK;
  return rt_disk_cache_evict(c, d);
}

/* ---- eviction ----------------------------------------------------------------------------------- */
typedef struct DcEntry {
  struct timespec mtime;
  uint64_t size;
  char rel[3 + DC_NAME_HEX + 1]; /* "ab/<name>" */
} DcEntry;

static bool is_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  return s[n] == '\0';
}

static int cmp_mtime(const void *pa, const void *pb) {
  const DcEntry *a = pa, *b = pb;
  if (a->mtime.tv_sec != b->mtime.tv_sec) return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
  if (a->mtime.tv_nsec != b->mtime.tv_nsec) return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
  return strcmp(a->rel, b->rel);
}

LoomStatus rt_disk_cache_evict(DiskCache *c, Diag *d) {
  if (!c) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_disk_cache_evict: cache is NULL");
  if (!c->enabled) return LOOM_OK;
  DIR *top = opendir(c->dir);
  if (!top)
    return diag_error(d, LOOM_ERR_BACKEND, "cannot read the kernel cache folder %s: %s", c->dir,
                      strerror(errno));
  DcEntry *ents = NULL;
  size_t n = 0, cap = 0;
  uint64_t total = 0;
  LoomStatus st = LOOM_OK;
  time_t now = time(NULL);
  char path[DC_PATH_MAX];
  struct dirent *de;
  while (st == LOOM_OK && (de = readdir(top)) != NULL) {
    if (!is_hex(de->d_name, 2)) continue;
    if (!pathf(path, sizeof path, "%s/%s", c->dir, de->d_name)) continue;
    int sfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); /* never a linked folder */
    DIR *shard = sfd >= 0 ? fdopendir(sfd) : NULL;
    if (!shard) {
      if (sfd >= 0) close(sfd);
      continue;
    }
    struct dirent *fe;
    while ((fe = readdir(shard)) != NULL) {
      struct stat sb;
      if (!pathf(path, sizeof path, "%s/%s/%s", c->dir, de->d_name, fe->d_name)) continue;
      if (strncmp(fe->d_name, ".tmp-", 5) == 0) {
        if (lstat(path, &sb) == 0 && now - sb.st_mtime > DC_TMP_MAX_AGE_S) unlink(path);
        continue;
      }
      if (!is_hex(fe->d_name, DC_NAME_HEX) || lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
      if (n == cap) {
        size_t ncap = cap ? cap * 2 : 64;
        DcEntry *g = ctx_alloc(c->ctx, ncap * sizeof *g);
        if (!g) {
          st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory scanning the kernel cache");
          break;
        }
        if (n) memcpy(g, ents, n * sizeof *g);
        ctx_free(c->ctx, ents);
        ents = g;
        cap = ncap;
      }
      DcEntry *en = &ents[n++];
      en->mtime = sb.st_mtim;
      en->size = (uint64_t)sb.st_size;
      pathf(en->rel, sizeof en->rel, "%.2s/%.32s", de->d_name, fe->d_name);
      total += en->size;
    }
    closedir(shard);
  }
  closedir(top);
  if (st == LOOM_OK && total > c->max_bytes) {
    qsort(ents, n, sizeof *ents, cmp_mtime);
    for (size_t i = 0; i < n && total > c->max_bytes; i++) {
      if (!pathf(path, sizeof path, "%s/%s", c->dir, ents[i].rel)) continue;
      if (unlink(path) == 0 || errno == ENOENT) total -= ents[i].size;
    }
  }
  ctx_free(c->ctx, ents);
  if (st == LOOM_OK) {
    atomic_store(&c->estimate, total);
    atomic_store(&c->stores, 0);
    atomic_store(&c->scanned, true);
  }
  return st;
}
