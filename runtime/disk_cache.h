/* SPDX-License-Identifier: Apache-2.0 */
/* disk_cache.h: a content-addressed disk cache for compiled binaries (cubins, code objects).
 *
 * The caller gives a key text that names everything the binary depends on (Loom's version, LLVM's
 * version, the target and the kernel's signature); the cache hashes nothing else. An entry lives in
 * <dir>/<h0h1>/<32 hex digits of a 128-bit hash of the key>, holding a header (magic, format version,
 * key length, payload length, 64-bit checksum of key and payload), the full key text and the payload.
 * Writes go to a temporary file in the same folder, then rename() (atomic: readers see the old entry,
 * no entry, or the new one, never a part). A read that finds a bad magic, version, length or checksum,
 * or another key (a hash collision), is a miss and deletes the entry so that it is written again.
 *
 * Directory: options.dir, else $LOOM_CACHE_DIR, else $XDG_CACHE_HOME/loom, else $HOME/.cache/loom.
 * An empty LOOM_CACHE_DIR (or options.dir == "") disables the cache: loads miss, stores do nothing.
 * Folders are created with mode 0700; the cache folder must be owned by the user.
 * Size cap: options.max_bytes, else $LOOM_CACHE_MAX_BYTES (bytes, or with a K, M or G suffix), else
 * 1 GiB. When a store takes the cache's estimate of the folder's size past the cap (and on its first
 * store, and every 256th: other processes write there too), the least recently used entries (oldest
 * mtime; a hit touches the entry) are deleted until the total is under the cap.
 *
 * Hostile folders: entries and shard folders are opened without following symbolic links and without
 * blocking (O_NOFOLLOW | O_NONBLOCK), and anything that is not a regular file (a FIFO, a device, a
 * link) is a miss, deleted when it is a file, so that the next store replaces it. A store checks the
 * process's file size limit (RLIMIT_FSIZE, `ulimit -f`) first: an entry that would exceed it is a
 * failed store, not a SIGXFSZ that kills the process; a full disk or quota (ENOSPC, EDQUOT, EFBIG) is
 * a failed store too, and leaves no temporary file. The signal disposition is never changed.
 *
 * Several processes may share a cache folder. Errors are LoomStatus values with a message; callers
 * treat a failed store as a warning (the cache is an optimization). The object is not thread-safe
 * itself only in that one DiskCache must not be closed while used; loads and stores from several
 * threads are fine (the file system does the synchronization).
 */
#ifndef LOOM_RUNTIME_DISK_CACHE_H
#define LOOM_RUNTIME_DISK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

typedef struct DiskCacheOptions {
  const char *dir;    /* NULL: from the environment (above); "": disabled */
  uint64_t max_bytes; /* 0: $LOOM_CACHE_MAX_BYTES or 1 GiB */
  /* The write(2) the stores use (NULL: write); tests inject ENOSPC / EDQUOT / EFBIG through it. */
  long (*write_fn)(int fd, const void *p, size_t n);
} DiskCacheOptions;

typedef struct DiskCache DiskCache;

/* Opens (creating folders as needed) the cache. options may be NULL. A disabled cache is still a
 * valid object. Errors: a folder that cannot be created or is not the user's, a bad
 * LOOM_CACHE_MAX_BYTES, no home folder to derive a default from. */
LoomStatus rt_disk_cache_open(LoomContext *ctx, const DiskCacheOptions *options, DiskCache **out,
                              Diag *d);
void rt_disk_cache_close(DiskCache *c); /* NULL ok */
bool rt_disk_cache_enabled(const DiskCache *c);
const char *rt_disk_cache_dir(const DiskCache *c); /* "" when disabled */
uint64_t rt_disk_cache_max_bytes(const DiskCache *c);

/* Looks key up. On a hit, *data (ctx_alloc'd; free with rt_disk_cache_free) and *size are set and
 * the entry's mtime is refreshed. A missing, corrupt or foreign entry is a miss (*hit false, LOOM_OK). */
LoomStatus rt_disk_cache_load(DiskCache *c, const char *key, void **data, size_t *size, bool *hit,
                              Diag *d);
void rt_disk_cache_free(DiskCache *c, void *data);
/* Writes (or replaces) the entry of key, then evicts down to the cap. A payload larger than the cap
 * is not stored (LOOM_OK). */
LoomStatus rt_disk_cache_store(DiskCache *c, const char *key, const void *data, size_t size, Diag *d);
/* Deletes least recently used entries until the total is at most the cap (stores call it). Also
 * removes temporary files older than an hour (left by writers that crashed). */
LoomStatus rt_disk_cache_evict(DiskCache *c, Diag *d);
/* The path of key's entry (for tests and tools); false if the cache is disabled or buf too small. */
bool rt_disk_cache_entry_path(const DiskCache *c, const char *key, char *buf, size_t bufsize);

#endif /* LOOM_RUNTIME_DISK_CACHE_H */
