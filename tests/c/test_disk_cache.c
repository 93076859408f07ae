/* SPDX-License-Identifier: Apache-2.0 */
/* test_disk_cache.c: the disk cache of compiled binaries, in a fresh temporary folder.
 *
 * Round trip, miss, corruption (a flipped byte, a truncated file, a foreign key) detected, deleted
 * and rewritten, folder modes, the disabled cache, LRU eviction under a small cap, reuse across
 * processes and several processes writing one key at once. Hostile folders (issue 10): a FIFO, a
 * symbolic link or a folder planted at an entry's path, a linked shard folder; stores under a file
 * size limit (`ulimit -f`: no SIGXFSZ death), with a full disk or quota (injected ENOSPC / EDQUOT /
 * EFBIG), each a clean failed store with no temporary file left. Prints "N passed, N failed".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/disk_cache.h"

static int passed, failed;
#define CHECK(cond)                                                    \
  do {                                                                 \
    if (cond) {                                                        \
      passed++;                                                        \
    } else {                                                           \
      failed++;                                                        \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                  \
  } while (0)

static char root[256];

static DiskCache *open_at(const char *sub, uint64_t max_bytes) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/%s", root, sub);
  DiskCacheOptions o = {.dir = dir, .max_bytes = max_bytes};
  DiskCache *c = NULL;
  Diag d = {0};
  LoomStatus st = rt_disk_cache_open(NULL, &o, &c, &d);
  if (st != LOOM_OK) fprintf(stderr, "open %s: %s\n", dir, d.msg);
  return c;
}

static bool load_eq(DiskCache *c, const char *key, const void *want, size_t n) {
  void *data = NULL;
  size_t size = 0;
  bool hit = false;
  Diag d = {0};
  if (rt_disk_cache_load(c, key, &data, &size, &hit, &d) != LOOM_OK) return false;
  bool ok = hit && size == n && (n == 0 || memcmp(data, want, n) == 0);
  rt_disk_cache_free(c, data);
  return ok;
}

static bool is_miss(DiskCache *c, const char *key) {
  void *data = NULL;
  size_t size = 0;
  bool hit = true;
  Diag d = {0};
  LoomStatus st = rt_disk_cache_load(c, key, &data, &size, &hit, &d);
  rt_disk_cache_free(c, data);
  return st == LOOM_OK && !hit && data == NULL;
}

static bool store(DiskCache *c, const char *key, const void *p, size_t n) {
  Diag d = {0};
  LoomStatus st = rt_disk_cache_store(c, key, p, n, &d);
  if (st != LOOM_OK) fprintf(stderr, "store: %s\n", d.msg);
  return st == LOOM_OK;
}

static void test_round_trip(void) {
  DiskCache *c = open_at("a/b/c", 0);
  CHECK(c && rt_disk_cache_enabled(c));
  if (!c) return;
  CHECK(rt_disk_cache_max_bytes(c) == ((uint64_t)1 << 30));
  const char *key = "loom 0.1.0 | llvm 19.1 | sm_90 | kernel add f32 [contig]";
  unsigned char bin[5000];
  for (size_t i = 0; i < sizeof bin; i++) bin[i] = (unsigned char)(i * 7 + 3);
  CHECK(is_miss(c, key));
  CHECK(store(c, key, bin, sizeof bin));
  CHECK(load_eq(c, key, bin, sizeof bin));
  CHECK(is_miss(c, "another key"));
  /* An empty payload is a valid entry. */
  CHECK(store(c, "empty", "", 0));
  CHECK(load_eq(c, "empty", "", 0));
  /* Replacing an entry. */
  CHECK(store(c, key, "new", 3));
  CHECK(load_eq(c, key, "new", 3));
  /* Folder modes: the cache folder, the created parents and the shard are 0700. */
  struct stat sb;
  char path[1024];
  CHECK(stat(rt_disk_cache_dir(c), &sb) == 0 && (sb.st_mode & 0777) == 0700);
  snprintf(path, sizeof path, "%s/a", root);
  CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0700);
  CHECK(rt_disk_cache_entry_path(c, key, path, sizeof path));
  CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);
  char *slash = strrchr(path, '/');
  *slash = '\0';
  CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0700);
  CHECK(strlen(slash + 1) == 32 && strncmp(slash - 2, slash + 1, 2) == 0); /* shard = 2 hex digits */
  rt_disk_cache_close(c);

  /* An existing folder with looser permissions is tightened. */
  snprintf(path, sizeof path, "%s/loose", root);
  mkdir(path, 0755);
  chmod(path, 0755);
  c = open_at("loose", 0);
  CHECK(c && stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0700);
  rt_disk_cache_close(c);
}

static bool corrupt_file(const char *path, long offset, int truncate_to) {
  if (truncate_to >= 0) return truncate(path, truncate_to) == 0;
  int fd = open(path, O_RDWR);
  if (fd < 0) return false;
  unsigned char b;
  bool ok = pread(fd, &b, 1, offset) == 1;
  b ^= 0x40;
  ok = ok && pwrite(fd, &b, 1, offset) == 1;
  close(fd);
  return ok;
}

static void test_corruption(void) {
  DiskCache *c = open_at("corrupt", 0);
  CHECK(c != NULL);
  if (!c) return;
  const char *key = "k-corrupt";
  char payload[300];
  memset(payload, 'x', sizeof payload);
  char path[1024];
  CHECK(rt_disk_cache_entry_path(c, key, path, sizeof path));
  struct stat sb;
  /* Offsets: magic, version, key length, checksum, key text, payload (first, middle, last). */
  long offsets[] = {0, 8, 16, 32, 40, 40 + 9, 40 + 9 + 150, 40 + 9 + 299};
  for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
    CHECK(store(c, key, payload, sizeof payload));
    CHECK(corrupt_file(path, offsets[i], -1));
    CHECK(is_miss(c, key));
    CHECK(stat(path, &sb) != 0); /* deleted */
    CHECK(store(c, key, payload, sizeof payload));
    CHECK(load_eq(c, key, payload, sizeof payload)); /* rewritten */
  }
  int truncs[] = {0, 10, 40, 48, 40 + 9 + 299};
  for (size_t i = 0; i < sizeof truncs / sizeof truncs[0]; i++) {
    CHECK(store(c, key, payload, sizeof payload));
    CHECK(corrupt_file(path, 0, truncs[i]));
    CHECK(is_miss(c, key));
    CHECK(stat(path, &sb) != 0);
  }
  /* Extra bytes at the end. */
  CHECK(store(c, key, payload, sizeof payload));
  int fd = open(path, O_WRONLY | O_APPEND);
  CHECK(fd >= 0 && write(fd, "zz", 2) == 2);
  if (fd >= 0) close(fd);
  CHECK(is_miss(c, key));
  /* A foreign key in the file of this key (a hash collision, simulated by renaming). */
  char other[1024];
  CHECK(store(c, "some other key!!!", payload, sizeof payload)); /* a longer key */
  CHECK(rt_disk_cache_entry_path(c, "some other key!!!", other, sizeof other));
  char shard_dir[1024];
  snprintf(shard_dir, sizeof shard_dir, "%s", path);
  *strrchr(shard_dir, '/') = '\0';
  mkdir(shard_dir, 0700);
  CHECK(rename(other, path) == 0);
  CHECK(is_miss(c, key));
  CHECK(stat(path, &sb) != 0);
  CHECK(store(c, "k-corrup2", payload, 10)); /* same length as key, different text */
  CHECK(rt_disk_cache_entry_path(c, "k-corrup2", other, sizeof other));
  CHECK(rename(other, path) == 0);
  CHECK(is_miss(c, key));
  CHECK(store(c, key, payload, sizeof payload));
  CHECK(load_eq(c, key, payload, sizeof payload));
  rt_disk_cache_close(c);
}

static void test_disabled(void) {
  DiskCacheOptions o = {.dir = ""};
  DiskCache *c = NULL;
  Diag d = {0};
  CHECK(rt_disk_cache_open(NULL, &o, &c, &d) == LOOM_OK && c);
  CHECK(!rt_disk_cache_enabled(c));
  CHECK(strcmp(rt_disk_cache_dir(c), "") == 0);
  CHECK(store(c, "k", "abc", 3));
  CHECK(is_miss(c, "k"));
  rt_disk_cache_close(c);

  /* From the environment: LOOM_CACHE_DIR="" disables; a bad LOOM_CACHE_MAX_BYTES is an error. */
  setenv("LOOM_CACHE_DIR", "", 1);
  c = NULL;
  CHECK(rt_disk_cache_open(NULL, NULL, &c, &d) == LOOM_OK && c && !rt_disk_cache_enabled(c));
  rt_disk_cache_close(c);
  char dir[512];
  snprintf(dir, sizeof dir, "%s/env", root);
  setenv("LOOM_CACHE_DIR", dir, 1);
  setenv("LOOM_CACHE_MAX_BYTES", "3M", 1);
  c = NULL;
  CHECK(rt_disk_cache_open(NULL, NULL, &c, &d) == LOOM_OK && c && rt_disk_cache_enabled(c));
  CHECK(c && strcmp(rt_disk_cache_dir(c), dir) == 0 && rt_disk_cache_max_bytes(c) == 3u << 20);
  rt_disk_cache_close(c);
  setenv("LOOM_CACHE_MAX_BYTES", "lots", 1);
  Diag d2 = {0};
  c = NULL;
  CHECK(rt_disk_cache_open(NULL, NULL, &c, &d2) == LOOM_ERR_INVALID_ARGUMENT && c == NULL);
  CHECK(strstr(d2.msg, "LOOM_CACHE_MAX_BYTES") != NULL);
  unsetenv("LOOM_CACHE_MAX_BYTES");
  /* XDG_CACHE_HOME when LOOM_CACHE_DIR is unset. */
  unsetenv("LOOM_CACHE_DIR");
  snprintf(dir, sizeof dir, "%s/xdg", root);
  setenv("XDG_CACHE_HOME", dir, 1);
  c = NULL;
  CHECK(rt_disk_cache_open(NULL, NULL, &c, &d) == LOOM_OK && c);
  snprintf(dir, sizeof dir, "%s/xdg/loom", root);
  CHECK(c && strcmp(rt_disk_cache_dir(c), dir) == 0);
  rt_disk_cache_close(c);
  unsetenv("XDG_CACHE_HOME");
  /* A path through a regular file cannot be a cache folder. */
  snprintf(dir, sizeof dir, "%s/file", root);
  int fd = open(dir, O_CREAT | O_WRONLY, 0600);
  if (fd >= 0) close(fd);
  Diag d3 = {0};
  c = NULL;
  CHECK(rt_disk_cache_open(NULL, &(DiskCacheOptions){.dir = dir}, &c, &d3) != LOOM_OK && c == NULL);
  CHECK(strstr(d3.msg, dir) != NULL);
}

static void set_mtime(DiskCache *c, const char *key, time_t t) {
  char path[1024];
  rt_disk_cache_entry_path(c, key, path, sizeof path);
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  utimensat(AT_FDCWD, path, ts, 0);
}

static void test_eviction(void) {
  DiskCache *c = open_at("evict", 10000); /* room for four 2000-byte entries with headers */
  CHECK(c != NULL);
  if (!c) return;
  char buf[2000];
  char key[32];
  time_t t0 = time(NULL) - 1000;
  for (int i = 0; i < 4; i++) {
    snprintf(key, sizeof key, "key-%d", i);
    memset(buf, 'a' + i, sizeof buf);
    CHECK(store(c, key, buf, sizeof buf));
    set_mtime(c, key, t0 + i * 10); /* key-0 oldest */
  }
  for (int i = 0; i < 4; i++) {
    snprintf(key, sizeof key, "key-%d", i);
    memset(buf, 'a' + i, sizeof buf);
    CHECK(load_eq(c, key, buf, sizeof buf)); /* all fit; each load touches */
  }
  /* Make key-1 the least recently used, key-0 recently used, then add key-4: key-1 goes. */
  for (int i = 0; i < 4; i++) {
    snprintf(key, sizeof key, "key-%d", i);
    set_mtime(c, key, t0 + i * 10);
  }
  memset(buf, 'a', sizeof buf);
  CHECK(load_eq(c, "key-0", buf, sizeof buf)); /* touch: now the newest */
  memset(buf, 'e', sizeof buf);
  CHECK(store(c, "key-4", buf, sizeof buf));
  CHECK(is_miss(c, "key-1"));
  memset(buf, 'a', sizeof buf);
  CHECK(load_eq(c, "key-0", buf, sizeof buf));
  memset(buf, 'c', sizeof buf);
  CHECK(load_eq(c, "key-2", buf, sizeof buf));
  memset(buf, 'e', sizeof buf);
  CHECK(load_eq(c, "key-4", buf, sizeof buf));
  /* A payload larger than the cap is not stored (and evicts nothing). */
  static char big[20000];
  CHECK(store(c, "big", big, sizeof big));
  CHECK(is_miss(c, "big"));
  CHECK(load_eq(c, "key-4", buf, sizeof buf));
  /* Old temporary files are removed by eviction; fresh ones are left alone. */
  char path[1024], tmp_old[1100], tmp_new[1100];
  rt_disk_cache_entry_path(c, "key-4", path, sizeof path);
  *strrchr(path, '/') = '\0';
  snprintf(tmp_old, sizeof tmp_old, "%s/.tmp-old123", path);
  snprintf(tmp_new, sizeof tmp_new, "%s/.tmp-new123", path);
  close(open(tmp_old, O_CREAT | O_WRONLY, 0600));
  close(open(tmp_new, O_CREAT | O_WRONLY, 0600));
  struct timespec ts[2] = {{t0 - 7200, 0}, {t0 - 7200, 0}};
  utimensat(AT_FDCWD, tmp_old, ts, 0);
  Diag d = {0};
  CHECK(rt_disk_cache_evict(c, &d) == LOOM_OK);
  struct stat sb;
  CHECK(stat(tmp_old, &sb) != 0);
  CHECK(stat(tmp_new, &sb) == 0);
  unlink(tmp_new);
  rt_disk_cache_close(c);
}

static void test_processes(void) {
  /* A child writes, the parent reads. */
  const char *key = "cross-process";
  char payload[777];
  for (size_t i = 0; i < sizeof payload; i++) payload[i] = (char)(i * 31);
  pid_t pid = fork();
  if (pid == 0) {
    DiskCache *c = open_at("shared", 0);
    bool ok = c && store(c, key, payload, sizeof payload);
    rt_disk_cache_close(c);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  DiskCache *c = open_at("shared", 0);
  CHECK(c && load_eq(c, key, payload, sizeof payload));

  /* Several writers of one key at once: the entry is always one whole payload. Each writer writes
   * a payload of its own (same length, its own fill byte) many times. */
  enum { NWRITERS = 6, ROUNDS = 40, SIZE = 65536 };
  pid_t kids[NWRITERS];
  for (int w = 0; w < NWRITERS; w++) {
    kids[w] = fork();
    if (kids[w] == 0) {
      DiskCache *cc = open_at("shared", 0);
      static char buf[SIZE];
      memset(buf, 'A' + w, sizeof buf);
      bool ok = cc != NULL;
      for (int r = 0; r < ROUNDS && ok; r++) {
        ok = store(cc, "contended", buf, sizeof buf);
        void *data = NULL;
        size_t size = 0;
        bool hit = false;
        Diag d = {0};
        /* A concurrent read must never see a torn entry: a hit is one writer's whole payload. */
        if (rt_disk_cache_load(cc, "contended", &data, &size, &hit, &d) != LOOM_OK) ok = false;
        if (hit) {
          const char *p = data;
          if (size != SIZE) ok = false;
          for (size_t i = 1; ok && i < size; i++)
            if (p[i] != p[0]) ok = false;
        }
        rt_disk_cache_free(cc, data);
      }
      rt_disk_cache_close(cc);
      _exit(ok ? 0 : 1);
    }
  }
  int good = 0;
  for (int w = 0; w < NWRITERS; w++) {
    if (kids[w] > 0 && waitpid(kids[w], &status, 0) == kids[w] && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0)
      good++;
  }
  CHECK(good == NWRITERS);
  void *data = NULL;
  size_t size = 0;
  bool hit = false;
  Diag d = {0};
  CHECK(c && rt_disk_cache_load(c, "contended", &data, &size, &hit, &d) == LOOM_OK && hit &&
        size == SIZE);
  if (hit && size == SIZE) {
    const char *p = data;
    bool same = p[0] >= 'A' && p[0] < 'A' + NWRITERS;
    for (size_t i = 1; i < size; i++) same = same && p[i] == p[0];
    CHECK(same);
  }
  rt_disk_cache_free(c, data);
  /* No temporary file is left behind. */
  char path[1024];
  CHECK(c && rt_disk_cache_entry_path(c, "contended", path, sizeof path));
  *strrchr(path, '/') = '\0';
  DIR *dir = opendir(path);
  int tmps = 0;
  struct dirent *de;
  while (dir && (de = readdir(dir)) != NULL)
    if (strncmp(de->d_name, ".tmp-", 5) == 0) tmps++;
  if (dir) closedir(dir);
  CHECK(tmps == 0);
  rt_disk_cache_close(c);
}

/* The number of ".tmp-" files in the shard folder of key. */
static int tmp_files(DiskCache *c, const char *key) {
  char path[1024];
  if (!rt_disk_cache_entry_path(c, key, path, sizeof path)) return -1;
  *strrchr(path, '/') = '\0';
  DIR *dir = opendir(path);
  int tmps = 0;
  struct dirent *de;
  while (dir && (de = readdir(dir)) != NULL)
    if (strncmp(de->d_name, ".tmp-", 5) == 0) tmps++;
  if (dir) closedir(dir);
  return tmps;
}

/* A loader that blocks on a FIFO would hang: run the load in a child with an alarm. */
static bool load_in_child_is_miss(DiskCache *c, const char *key) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    _exit(is_miss(c, key) ? 0 : 1);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_hostile_entries(void) {
  DiskCache *c = open_at("hostile", 0);
  CHECK(c != NULL);
  if (!c) return;
  char path[1024], target[1024];
  const char payload[] = "kernel bytes";
  /* a FIFO at the entry's path: a miss at once (no writer ever comes), removed, then stored */
  const char *key = "fifo-key";
  CHECK(store(c, key, "x", 1));
  CHECK(rt_disk_cache_entry_path(c, key, path, sizeof path));
  CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
  CHECK(load_in_child_is_miss(c, key));
  CHECK(is_miss(c, key));
  CHECK(store(c, key, payload, sizeof payload));
  CHECK(load_eq(c, key, payload, sizeof payload));
  /* a symbolic link at the entry's path (to a valid entry elsewhere): not followed, a miss */
  const char *key2 = "link-key";
  CHECK(store(c, key2, "y", 1));
  CHECK(rt_disk_cache_entry_path(c, key2, path, sizeof path));
  snprintf(target, sizeof target, "%s/outside", root);
  CHECK(rename(path, target) == 0 && symlink(target, path) == 0);
  CHECK(is_miss(c, key2));
  struct stat sb;
  CHECK(stat(target, &sb) == 0); /* the link's target is untouched */
  CHECK(store(c, key2, payload, sizeof payload));
  CHECK(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode));
  CHECK(load_eq(c, key2, payload, sizeof payload));
  /* a folder at the entry's path: a miss; the store fails cleanly (the folder stays) */
  const char *key3 = "dir-key";
  CHECK(store(c, key3, "z", 1));
  CHECK(rt_disk_cache_entry_path(c, key3, path, sizeof path));
  CHECK(unlink(path) == 0 && mkdir(path, 0700) == 0);
  CHECK(is_miss(c, key3));
  Diag d = {0};
  CHECK(rt_disk_cache_store(c, key3, payload, sizeof payload, &d) != LOOM_OK && d.msg[0]);
  CHECK(tmp_files(c, key3) == 0);
  rmdir(path);
  /* a shard folder replaced by a link to a folder elsewhere: never read or written through */
  const char *key4 = "shard-key";
  CHECK(store(c, key4, payload, sizeof payload));
  CHECK(rt_disk_cache_entry_path(c, key4, path, sizeof path));
  *strrchr(path, '/') = '\0';
  snprintf(target, sizeof target, "%s/moved-shard", root);
  CHECK(rename(path, target) == 0 && symlink(target, path) == 0);
  CHECK(is_miss(c, key4));
  Diag d2 = {0};
  CHECK(rt_disk_cache_store(c, key4, payload, sizeof payload, &d2) != LOOM_OK && strstr(d2.msg, "link"));
  Diag d3 = {0};
  CHECK(rt_disk_cache_evict(c, &d3) == LOOM_OK);
  CHECK(stat(target, &sb) == 0 && S_ISDIR(sb.st_mode)); /* eviction did not walk into it either */
  unlink(path);
  rt_disk_cache_close(c);
}

/* write(2) stand-ins: a disk that fills up after `budget` bytes, with errno `fail_errno`. */
static long write_budget;
static int write_errno;
static long failing_write(int fd, const void *p, size_t n) {
  if (write_budget <= 0) {
    errno = write_errno;
    return -1;
  }
  size_t k = n < (size_t)write_budget ? n : (size_t)write_budget;
  ssize_t w = write(fd, p, k);
  if (w > 0) write_budget -= w;
  return (long)w;
}

static void test_failed_stores(void) {
  static char big[100000];
  for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 7);
  /* a full disk, a quota, a file too large: each a failed store with the reason, nothing left over;
   * the entry that was there (an older payload) stays valid */
  char dir[512];
  snprintf(dir, sizeof dir, "%s/full", root);
  int errs[3] = {ENOSPC, EDQUOT, EFBIG};
  for (int k = 0; k < 3; k++) {
    DiskCache *c = NULL;
    Diag d = {0};
    CHECK(rt_disk_cache_open(NULL, &(DiskCacheOptions){.dir = dir, .write_fn = failing_write}, &c, &d) == LOOM_OK);
    if (!c) continue;
    write_budget = 1 << 30;
    CHECK(store(c, "full-key", "old", 3));
    write_budget = 5000;
    write_errno = errs[k];
    Diag e = {0};
    CHECK(rt_disk_cache_store(c, "full-key", big, sizeof big, &e) == LOOM_ERR_BACKEND);
    CHECK(strstr(e.msg, strerror(errs[k])) != NULL);
    CHECK(tmp_files(c, "full-key") == 0);
    CHECK(load_eq(c, "full-key", "old", 3));
    rt_disk_cache_close(c);
  }
  /* `ulimit -f`: a child whose file size limit is below the entry (SIGXFSZ at its default action,
   * which would kill it) gets a failed store and lives on; a small entry still fits */
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_DFL);
    struct rlimit rl = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
    DiskCache *c = open_at("ulimit", 0);
    Diag e = {0};
    bool ok = c && rt_disk_cache_store(c, "too-big", big, sizeof big, &e) == LOOM_ERR_BACKEND &&
              strstr(e.msg, "ulimit") != NULL && is_miss(c, "too-big") && tmp_files(c, "too-big") == 0 &&
              store(c, "small", "abc", 3) && load_eq(c, "small", "abc", 3);
    rt_disk_cache_close(c);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (WIFSIGNALED(status)) fprintf(stderr, "the ulimit child died of signal %d\n", WTERMSIG(status));
}

static void remove_tree(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return;
  DIR *dir = S_ISDIR(sb.st_mode) ? opendir(path) : NULL; /* never into a link */
  if (!dir) {
    unlink(path);
    return;
  }
  struct dirent *de;
  char sub[2048];
  while ((de = readdir(dir)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
    remove_tree(sub);
  }
  closedir(dir);
  rmdir(path);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/loom_disk_cache_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(root)) {
    perror("mkdtemp");
    return 1;
  }
  unsetenv("LOOM_CACHE_MAX_BYTES");
  test_round_trip();
  test_corruption();
  test_disabled();
  test_eviction();
  test_processes();
  test_hostile_entries();
  test_failed_stores();
  remove_tree(root);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
