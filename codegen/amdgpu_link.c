/* amdgpu_link.c: relocatable object -> executable code object, and the code object's metadata.
 *
 * Why here (codegen/) and not in runtime/: ROCm comgr is a compiler library (a linker, a code object
 * reader; it drives no device), so it belongs with the code generator that produces what it links, the
 * way LLVM itself does; only runtime/ talks to drivers (HIP). It is loaded at run time with dlopen, like
 * the drivers, so one build runs with or without ROCm, and its absence is a clear error or the lld path.
 * The runtime calls cg_amdgpu_read_metadata for code objects it did not compile (RawModule).
 *
 * Linking: comgr (AMD_COMGR_ACTION_LINK_RELOCATABLE_TO_EXECUTABLE for the ISA "amdgcn-amd-amdhsa--gfxN")
 * when it loads and lists the chip among its ISAs; otherwise ld.lld run as a process
 * (`ld.lld -shared --no-undefined`), which is what comgr runs inside: Debian's comgr 5.2.3 (LLVM 15)
 * links gfx90a objects but predates gfx942 and gfx1100, while LLVM 19's lld knows every chip LLVM 19
 * emits. On a ROCm 6.x machine comgr knows gfx942 and links it. LOOM_AMDGPU_LINKER=comgr|lld forces
 * one; LOOM_LD_LLD names the lld binary. comgr is found as $LOOM_COMGR, else libamd_comgr.so.3,
 * libamd_comgr.so.2, libamd_comgr.so (ROCm's /opt/rocm/lib is tried too).
 *
 * Metadata: comgr's metadata API (amd_comgr_get_data_metadata on the executable; map, list and string
 * nodes) gives the kernels' kernarg segment size and alignment, argument layout (explicit and hidden
 * arguments: which hidden ones a kernel has, and where, depends on the code object version and on what
 * the optimizer proved unused, so it is read, never assumed), LDS and scratch sizes, register counts,
 * spills, wave size and the largest workgroup the code allows.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codegen/amdgpu.h"

extern char **environ;

/* ---- comgr, loaded at run time ------------------------------------------------------------------------ */
/* The subset of amd_comgr.h (interface 2.x) Loom uses; the values are comgr's ABI. */
typedef struct { uint64_t handle; } ComgrHandle; /* data, data set, action info, metadata node */
enum { COMGR_SUCCESS = 0 };
enum { COMGR_DATA_LOG = 0x5, COMGR_DATA_RELOCATABLE = 0x7, COMGR_DATA_EXECUTABLE = 0x8 };
enum { COMGR_ACTION_LINK_RELOCATABLE_TO_EXECUTABLE = 0x9 };
enum { COMGR_META_NULL = 0, COMGR_META_STRING = 1, COMGR_META_MAP = 2, COMGR_META_LIST = 3 };

#define COMGR_FUNCS(X)                                                                         \
  X(get_version, void, (size_t *, size_t *))                                                  \
  X(status_string, int, (int, const char **))                                                 \
  X(get_isa_count, int, (size_t *))                                                           \
  X(get_isa_name, int, (size_t, const char **))                                               \
  X(create_data, int, (int, ComgrHandle *))                                                   \
  X(release_data, int, (ComgrHandle))                                                         \
  X(set_data, int, (ComgrHandle, size_t, const char *))                                       \
  X(set_data_name, int, (ComgrHandle, const char *))                                          \
  X(get_data, int, (ComgrHandle, size_t *, char *))                                           \
  X(create_data_set, int, (ComgrHandle *))                                                    \
  X(destroy_data_set, int, (ComgrHandle))                                                     \
  X(data_set_add, int, (ComgrHandle, ComgrHandle))                                            \
  X(action_data_count, int, (ComgrHandle, int, size_t *))                                     \
  X(action_data_get_data, int, (ComgrHandle, int, size_t, ComgrHandle *))                     \
  X(create_action_info, int, (ComgrHandle *))                                                 \
  X(destroy_action_info, int, (ComgrHandle))                                                  \
  X(action_info_set_isa_name, int, (ComgrHandle, const char *))                               \
  X(action_info_set_logging, int, (ComgrHandle, bool))                                        \
  X(do_action, int, (int, ComgrHandle, ComgrHandle, ComgrHandle))                             \
  X(get_data_metadata, int, (ComgrHandle, ComgrHandle *))                                     \
  X(destroy_metadata, int, (ComgrHandle))                                                     \
  X(get_metadata_kind, int, (ComgrHandle, int *))                                             \
  X(get_metadata_string, int, (ComgrHandle, size_t *, char *))                                \
  X(metadata_lookup, int, (ComgrHandle, const char *, ComgrHandle *))                         \
  X(get_metadata_list_size, int, (ComgrHandle, size_t *))                                     \
  X(index_list_metadata, int, (ComgrHandle, size_t, ComgrHandle *))

typedef struct Comgr {
#define COMGR_FIELD(name, ret, params) ret(*name) params;
  COMGR_FUNCS(COMGR_FIELD)
#undef COMGR_FIELD
  size_t major, minor;
} Comgr;

/* Loads comgr into c (never unloaded: RTLD_NODELETE; it carries its own LLVM, whose static state must
 * not be torn down and rebuilt). false with why filled when it cannot be loaded. */
static bool comgr_load(Comgr *c, char *why, size_t why_cap) {
  const char *env = getenv("LOOM_COMGR");
  const char *names[] = {env && *env ? env : NULL, "libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so",
                         "/opt/rocm/lib/libamd_comgr.so.3", "/opt/rocm/lib/libamd_comgr.so.2"};
  void *lib = NULL;
  char err[512] = ""; /* the first dlerror() (its buffer does not outlive the next dlopen) */
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++) {
    if (!names[i]) continue;
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    const char *e = lib ? NULL : dlerror();
    if (e && (i == 0 || !err[0])) snprintf(err, sizeof err, "%s", e);
    if (!lib && i == 0) break; /* $LOOM_COMGR names the one to use */
  }
  if (!lib) {
    if (why) snprintf(why, why_cap, "ROCm comgr not found (%s%s%s%s)", env && *env ? "LOOM_COMGR=" : "tried libamd_comgr.so.{3,2}",
                      env && *env ? env : "", err[0] ? ": " : "", err);
    return false;
  }
  memset(c, 0, sizeof *c);
  const char *missing = NULL;
#define COMGR_RESOLVE(name, ret, params)                  \
  do {                                                    \
    void *p_ = dlsym(lib, "amd_comgr_" #name);            \
    if (!p_ && !missing) missing = "amd_comgr_" #name;    \
    memcpy(&c->name, &p_, sizeof p_);                     \
  } while (0);
  COMGR_FUNCS(COMGR_RESOLVE)
#undef COMGR_RESOLVE
  if (missing) {
    if (why) snprintf(why, why_cap, "ROCm comgr is too old: it has no %s", missing);
    dlclose(lib);
    return false;
  }
  c->get_version(&c->major, &c->minor);
  if (c->major < 2 || c->major > 3) {
    if (why) snprintf(why, why_cap, "ROCm comgr %zu.%zu has an interface Loom does not know (2.x or 3.x)", c->major, c->minor);
    dlclose(lib);
    return false;
  }
  dlclose(lib); /* RTLD_NODELETE: the functions stay */
  return true;
}

bool cg_amdgpu_comgr_available(char *version, size_t version_cap, char *why, size_t why_cap) {
  Comgr c;
  if (!comgr_load(&c, why, why_cap)) return false;
  if (version) snprintf(version, version_cap, "%zu.%zu", c.major, c.minor);
  return true;
}

static bool find_lld(char *out, size_t cap);

bool cg_amdgpu_toolchain_available(LoomContext *ctx, char *why, size_t why_cap) {
  AmdDevLibs *dl = cg_amd_devlibs_new(ctx);
  Diag d = {.status = LOOM_OK};
  LoomStatus st = dl ? cg_amd_devlibs_locate(dl, &d) : LOOM_ERR_OUT_OF_MEMORY;
  cg_amd_devlibs_free(dl);
  if (st != LOOM_OK) {
    snprintf(why, why_cap, "%s", dl ? d.msg : "out of memory");
    return false;
  }
  Comgr c;
  char reason[512] = "", lld[1024];
  if (!comgr_load(&c, reason, sizeof reason) && !find_lld(lld, sizeof lld)) {
    snprintf(why, why_cap, "no linker for AMDGPU code objects: %s, and no ld.lld (install lld-19, or set LOOM_LD_LLD)",
             reason);
    return false;
  }
  return true;
}

static const char *comgr_text(const Comgr *c, int status) {
  const char *s = NULL;
  return c->status_string(status, &s) == COMGR_SUCCESS && s ? s : "unknown comgr status";
}

/* Whether comgr lists the ISA of chip. */
static bool comgr_knows(const Comgr *c, const char *isa) {
  size_t n = 0;
  if (c->get_isa_count(&n) != COMGR_SUCCESS) return false;
  size_t len = strlen(isa);
  for (size_t i = 0; i < n; i++) {
    const char *name = NULL;
    if (c->get_isa_name(i, &name) != COMGR_SUCCESS || !name) continue;
    if (!strncmp(name, isa, len) && (name[len] == 0 || name[len] == ':')) return true;
  }
  return false;
}

/* The bytes of data (ctx_alloc'ed, NUL-terminated one past size). */
static char *comgr_bytes(LoomContext *ctx, const Comgr *c, ComgrHandle data, size_t *size) {
  size_t n = 0;
  if (c->get_data(data, &n, NULL) != COMGR_SUCCESS) return NULL;
  char *b = ctx_alloc(ctx, n + 1);
  if (b && c->get_data(data, &n, b) != COMGR_SUCCESS) {
    ctx_free(ctx, b);
    return NULL;
  }
  if (b) b[n] = 0;
  *size = n;
  return b;
}

static LoomStatus comgr_link(LoomContext *ctx, const Comgr *c, const char *isa, const void *obj, size_t size, char **out,
                             size_t *out_size, Diag *d) {
  ComgrHandle in = {0}, res = {0}, info = {0}, data = {0}, exe = {0};
  bool have_in = false, have_res = false, have_info = false;
  int s = c->create_data(COMGR_DATA_RELOCATABLE, &data);
  if (s == COMGR_SUCCESS) s = c->set_data(data, size, obj);
  if (s == COMGR_SUCCESS) s = c->set_data_name(data, "loom.o");
  if (s == COMGR_SUCCESS && (s = c->create_data_set(&in)) == COMGR_SUCCESS) have_in = true;
  if (s == COMGR_SUCCESS) s = c->data_set_add(in, data);
  if (s == COMGR_SUCCESS && (s = c->create_data_set(&res)) == COMGR_SUCCESS) have_res = true;
  if (s == COMGR_SUCCESS && (s = c->create_action_info(&info)) == COMGR_SUCCESS) have_info = true;
  if (s == COMGR_SUCCESS) s = c->action_info_set_isa_name(info, isa);
  if (s == COMGR_SUCCESS) s = c->action_info_set_logging(info, true);
  LoomStatus st = LOOM_OK;
  if (s != COMGR_SUCCESS) {
    st = diag_error(d, LOOM_ERR_BACKEND, "ROCm comgr: setting up the link for %s failed: %s", isa, comgr_text(c, s));
  } else if ((s = c->do_action(COMGR_ACTION_LINK_RELOCATABLE_TO_EXECUTABLE, info, in, res)) != COMGR_SUCCESS) {
    char log[512] = "";
    size_t nlog = 0;
    ComgrHandle lg;
    if (c->action_data_count(res, COMGR_DATA_LOG, &nlog) == COMGR_SUCCESS && nlog > 0 &&
        c->action_data_get_data(res, COMGR_DATA_LOG, 0, &lg) == COMGR_SUCCESS) {
      size_t n = 0;
      char *text = comgr_bytes(ctx, c, lg, &n);
      if (text) snprintf(log, sizeof log, ": %s", text);
      ctx_free(ctx, text);
      c->release_data(lg);
    }
    st = diag_error(d, LOOM_ERR_BACKEND, "ROCm comgr could not link the code object for %s (%s)%s", isa,
                    comgr_text(c, s), log);
  } else if ((s = c->action_data_get_data(res, COMGR_DATA_EXECUTABLE, 0, &exe)) != COMGR_SUCCESS) {
    st = diag_error(d, LOOM_ERR_BACKEND, "ROCm comgr linked no executable for %s: %s", isa, comgr_text(c, s));
  } else {
    *out = comgr_bytes(ctx, c, exe, out_size);
    if (!*out) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory reading comgr's code object");
    c->release_data(exe);
  }
  if (data.handle) c->release_data(data);
  if (have_in) c->destroy_data_set(in);
  if (have_res) c->destroy_data_set(res);
  if (have_info) c->destroy_action_info(info);
  return st;
}

/* ---- ld.lld as a process ---------------------------------------------------------------------------- */

static bool executable(const char *path) { return path && access(path, X_OK) == 0; }

/* The ld.lld to run: $LOOM_LD_LLD, else LLVM 19's, ROCm's, then ld.lld on PATH. */
static bool find_lld(char *out, size_t cap) {
  const char *env = getenv("LOOM_LD_LLD");
  if (env && *env) {
    snprintf(out, cap, "%s", env);
    return executable(out);
  }
  const char *fixed[] = {"/usr/lib/llvm-19/bin/ld.lld", "/usr/bin/ld.lld-19", "/opt/rocm/llvm/bin/ld.lld"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (executable(fixed[i])) {
      snprintf(out, cap, "%s", fixed[i]);
      return true;
    }
  const char *path = getenv("PATH");
  for (const char *p = path; p && *p;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    for (int v = 0; v < 2; v++) {
      snprintf(out, cap, "%.*s/%s", (int)n, p, v ? "ld.lld" : "ld.lld-19");
      if (n && executable(out)) return true;
    }
    p = e ? e + 1 : NULL;
  }
  return false;
}

static bool write_all(const char *path, const void *b, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const char *p = b;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0 && errno != EINTR) break;
    if (w > 0) p += w, n -= (size_t)w;
  }
  return close(fd) == 0 && n == 0;
}

static char *read_all(LoomContext *ctx, const char *path, size_t *size, size_t limit) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long len = -1;
  if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
  if (len < 0 || (size_t)len > limit) len = len < 0 ? -1 : (long)limit;
  char *b = len >= 0 && fseek(f, 0, SEEK_SET) == 0 ? ctx_alloc(ctx, (size_t)len + 1) : NULL;
  if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
    ctx_free(ctx, b);
    b = NULL;
  }
  fclose(f);
  if (b) b[len] = 0;
  if (b && size) *size = (size_t)len;
  return b;
}

#define LLD_TIMEOUT_S 120

static LoomStatus lld_link(LoomContext *ctx, const char *lld, const void *obj, size_t size, char **out, size_t *out_size,
                           Diag *d) {
  const char *tmp = getenv("TMPDIR");
  char dir[512], in[600], exe[600], log[600];
  snprintf(dir, sizeof dir, "%s/loom-lld-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return diag_error(d, LOOM_ERR_BACKEND, "ld.lld: cannot make a temporary folder in %s: %s",
                                       tmp && *tmp ? tmp : "/tmp", strerror(errno));
  snprintf(in, sizeof in, "%s/kernel.o", dir);
  snprintf(exe, sizeof exe, "%s/kernel.co", dir);
  snprintf(log, sizeof log, "%s/lld.log", dir);
  LoomStatus st = LOOM_OK;
  if (!write_all(in, obj, size)) {
    st = diag_error(d, LOOM_ERR_BACKEND, "ld.lld: cannot write %s: %s", in, strerror(errno));
  } else {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    char *argv[] = {(char *)lld, "-shared", "--no-undefined", "-o", exe, in, NULL};
    pid_t pid = 0;
    int rc = posix_spawn(&pid, lld, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      st = diag_error(d, LOOM_ERR_BACKEND, "cannot run %s: %s", lld, strerror(rc));
    } else {
      int status = 0;
      struct timespec step = {0, 2000000}; /* 2 ms */
      long waited_ms = 0;
      pid_t w;
      while ((w = waitpid(pid, &status, WNOHANG)) == 0 && waited_ms < LLD_TIMEOUT_S * 1000L) {
        nanosleep(&step, NULL);
        waited_ms += 2;
      }
      if (w == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        st = diag_error(d, LOOM_ERR_BACKEND, "%s did not finish within %d s (killed)", lld, LLD_TIMEOUT_S);
      } else if (w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char *msg = read_all(ctx, log, NULL, 600);
        st = diag_error(d, LOOM_ERR_BACKEND, "%s -shared --no-undefined failed (status %d): %s", lld,
                        w > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg && *msg ? msg : "no output");
        ctx_free(ctx, msg);
      } else {
        *out = read_all(ctx, exe, out_size, (size_t)1 << 30);
        if (!*out) st = diag_error(d, LOOM_ERR_BACKEND, "ld.lld: cannot read its output %s", exe);
      }
    }
  }
  unlink(in);
  unlink(exe);
  unlink(log);
  rmdir(dir);
  return st;
}

LoomStatus cg_amd_link(LoomContext *ctx, const CgAmdChip *chip, const void *obj, size_t size, char **out,
                       size_t *out_size, const char **path, char *why, size_t why_cap, Diag *d) {
  char isa[64], reason[512] = "";
  snprintf(isa, sizeof isa, "%s--%s", AMDGPU_TRIPLE, chip->name);
  const char *force = getenv("LOOM_AMDGPU_LINKER");
  bool want_comgr = force && !strcmp(force, "comgr"), want_lld = force && !strcmp(force, "lld");
  if (force && *force && !want_comgr && !want_lld && strcmp(force, "auto"))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "LOOM_AMDGPU_LINKER=%s: use comgr, lld or auto", force);
  *out = NULL;
  if (!want_lld) {
    Comgr c;
    if (!comgr_load(&c, reason, sizeof reason)) {
      if (want_comgr) return diag_error(d, LOOM_ERR_UNSUPPORTED, "LOOM_AMDGPU_LINKER=comgr: %s", reason);
    } else if (!comgr_knows(&c, isa)) {
      snprintf(reason, sizeof reason, "comgr %zu.%zu does not know %s", c.major, c.minor, isa);
      if (want_comgr) return diag_error(d, LOOM_ERR_UNSUPPORTED, "LOOM_AMDGPU_LINKER=comgr: %s", reason);
    } else {
      if (why && why_cap) why[0] = 0;
      *path = "comgr";
      return comgr_link(ctx, &c, isa, obj, size, out, out_size, d);
    }
  } else {
    snprintf(reason, sizeof reason, "LOOM_AMDGPU_LINKER=lld");
  }
  char lld[1024];
  if (!find_lld(lld, sizeof lld))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "cannot link the AMDGPU code object for %s: %s, and no ld.lld found "
                      "(install lld-19, or set LOOM_LD_LLD)", chip->name, reason);
  if (why && why_cap) snprintf(why, why_cap, "%s", reason);
  *path = "ld.lld";
  return lld_link(ctx, lld, obj, size, out, out_size, d);
}

/* ---- metadata ---------------------------------------------------------------------------------------- */

/* The string of node (numbers are strings too) into buf; false when node is not a string. */
static bool meta_str(const Comgr *c, ComgrHandle node, char *buf, size_t cap) {
  int kind = -1;
  size_t n = 0;
  if (c->get_metadata_kind(node, &kind) != COMGR_SUCCESS || kind != COMGR_META_STRING) return false;
  if (c->get_metadata_string(node, &n, NULL) != COMGR_SUCCESS || n == 0) return false;
  char tmp[4096];
  if (n > sizeof tmp) n = sizeof tmp;
  if (c->get_metadata_string(node, &n, tmp) != COMGR_SUCCESS) return false;
  size_t len = strnlen(tmp, n < cap ? n : cap - 1);
  memcpy(buf, tmp, len);
  buf[len] = 0;
  return true;
}

/* map[key] as a string (false when absent). */
static bool meta_get(const Comgr *c, ComgrHandle map, const char *key, char *buf, size_t cap) {
  ComgrHandle v;
  if (c->metadata_lookup(map, key, &v) != COMGR_SUCCESS) return false;
  bool ok = meta_str(c, v, buf, cap);
  c->destroy_metadata(v);
  return ok;
}

static int64_t meta_int(const Comgr *c, ComgrHandle map, const char *key, int64_t absent) {
  char buf[64];
  if (!meta_get(c, map, key, buf, sizeof buf)) return absent;
  char *end = NULL;
  long long v = strtoll(buf, &end, 0);
  return end && end != buf ? (int64_t)v : absent;
}

/* map[key] as a list node (*n its length); false when absent or not a list. */
static bool meta_list(const Comgr *c, ComgrHandle map, const char *key, ComgrHandle *list, size_t *n) {
  if (c->metadata_lookup(map, key, list) != COMGR_SUCCESS) return false;
  int kind = -1;
  if (c->get_metadata_kind(*list, &kind) != COMGR_SUCCESS || kind != COMGR_META_LIST ||
      c->get_metadata_list_size(*list, n) != COMGR_SUCCESS) {
    c->destroy_metadata(*list);
    return false;
  }
  return true;
}

static LoomStatus read_kernel(LoomContext *ctx, const Comgr *c, ComgrHandle km, CgAmdKernelMeta *k, Diag *d) {
  if (!meta_get(c, km, ".name", k->name, sizeof k->name))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "AMDGPU code object metadata: a kernel without .name");
  if (!meta_get(c, km, ".symbol", k->symbol, sizeof k->symbol)) snprintf(k->symbol, sizeof k->symbol, "%s.kd", k->name);
  k->kernarg_size = (uint32_t)meta_int(c, km, ".kernarg_segment_size", 0);
  k->kernarg_align = (uint32_t)meta_int(c, km, ".kernarg_segment_align", 8);
  k->group_segment = (uint32_t)meta_int(c, km, ".group_segment_fixed_size", 0);
  k->private_segment = (uint32_t)meta_int(c, km, ".private_segment_fixed_size", 0);
  k->max_flat_workgroup = (uint32_t)meta_int(c, km, ".max_flat_workgroup_size", 0);
  k->wave = (uint32_t)meta_int(c, km, ".wavefront_size", 0);
  k->sgprs = (int32_t)meta_int(c, km, ".sgpr_count", -1);
  k->vgprs = (int32_t)meta_int(c, km, ".vgpr_count", -1);
  k->agprs = (int32_t)meta_int(c, km, ".agpr_count", -1);
  k->sgpr_spills = (int32_t)meta_int(c, km, ".sgpr_spill_count", -1);
  k->vgpr_spills = (int32_t)meta_int(c, km, ".vgpr_spill_count", -1);
  ComgrHandle args;
  size_t n = 0;
  if (!meta_list(c, km, ".args", &args, &n)) return LOOM_OK; /* a kernel without arguments */
  LoomStatus st = LOOM_OK;
  k->args = n ? ctx_calloc(ctx, n, sizeof *k->args) : NULL;
  if (n && !k->args) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory reading code object metadata");
  for (size_t i = 0; st == LOOM_OK && i < n; i++) {
    ComgrHandle am;
    if (c->index_list_metadata(args, i, &am) != COMGR_SUCCESS) {
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "AMDGPU code object metadata: unreadable argument %zu of %s", i, k->name);
      break;
    }
    CgAmdArg *a = &k->args[k->nargs++];
    a->offset = (uint32_t)meta_int(c, am, ".offset", 0);
    a->size = (uint32_t)meta_int(c, am, ".size", 0);
    a->address_space = -1;
    char space[32];
    if (meta_get(c, am, ".address_space", space, sizeof space))
      a->address_space = !strcmp(space, "global") ? 1 : !strcmp(space, "local") ? 3 : !strcmp(space, "constant") ? 4
                         : !strcmp(space, "private") ? 5 : !strcmp(space, "generic") ? 0 : -1;
    if (!meta_get(c, am, ".value_kind", a->kind, sizeof a->kind)) snprintf(a->kind, sizeof a->kind, "?");
    c->destroy_metadata(am);
  }
  c->destroy_metadata(args);
  return st;
}

void cg_amdgpu_meta_free(LoomContext *ctx, CgAmdMeta *m) {
  if (!m) return;
  for (int32_t i = 0; i < m->nkernels; i++) ctx_free(ctx, m->kernels[i].args);
  ctx_free(ctx, m->kernels);
  memset(m, 0, sizeof *m);
}

LoomStatus cg_amdgpu_read_metadata(LoomContext *ctx, const void *code, size_t size, CgAmdMeta *out, Diag *d) {
  if (!out || (!code && size)) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cg_amdgpu_read_metadata: null argument");
  memset(out, 0, sizeof *out);
  static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
  if (size < 64 || memcmp(code, elf, 4) != 0)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "not an AMDGPU code object (%zu bytes, no ELF header)", size);
  Comgr c;
  char why[512];
  if (!comgr_load(&c, why, sizeof why))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "cannot read the code object's metadata: %s", why);
  ComgrHandle data = {0}, root = {0};
  int s = c.create_data(COMGR_DATA_EXECUTABLE, &data);
  if (s == COMGR_SUCCESS) s = c.set_data(data, size, code);
  if (s == COMGR_SUCCESS) s = c.get_data_metadata(data, &root);
  if (s != COMGR_SUCCESS) {
    if (data.handle) c.release_data(data);
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "ROCm comgr %zu.%zu cannot read the code object's metadata (%s): "
                      "not an AMDGPU code object of a version it knows", c.major, c.minor, comgr_text(&c, s));
  }
  LoomStatus st = LOOM_OK;
  ComgrHandle list;
  size_t n = 0;
  if (meta_list(&c, root, "amdhsa.version", &list, &n)) {
    for (size_t i = 0; i < n && i < 2; i++) {
      ComgrHandle v;
      char buf[32];
      if (c.index_list_metadata(list, i, &v) != COMGR_SUCCESS) continue;
      if (meta_str(&c, v, buf, sizeof buf)) out->version[i] = atoi(buf);
      c.destroy_metadata(v);
    }
    c.destroy_metadata(list);
  }
  meta_get(&c, root, "amdhsa.target", out->target, sizeof out->target);
  if (!meta_list(&c, root, "amdhsa.kernels", &list, &n)) {
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "AMDGPU code object metadata without amdhsa.kernels (code object v3 "
                    "or newer expected)");
  } else {
    out->kernels = n ? ctx_calloc(ctx, n, sizeof *out->kernels) : NULL;
    if (n && !out->kernels) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory reading code object metadata");
    for (size_t i = 0; st == LOOM_OK && i < n; i++) {
      ComgrHandle km;
      if (c.index_list_metadata(list, i, &km) != COMGR_SUCCESS) {
        st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "AMDGPU code object metadata: unreadable kernel %zu", i);
        break;
      }
      st = read_kernel(ctx, &c, km, &out->kernels[out->nkernels++], d);
      c.destroy_metadata(km);
    }
    c.destroy_metadata(list);
  }
  c.destroy_metadata(root);
  c.release_data(data);
  if (st != LOOM_OK) cg_amdgpu_meta_free(ctx, out);
  return st;
}
