/* vendor_lib.c: rt_dlopen_first, the candidate loop of every vendor library binding (contract in
 * vendor_lib.h). Candidates are generated one at a time into a stack buffer (no allocation), the names
 * tried are listed in the failure message, and the first refusal's reason wins over "not found". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/vendor_lib.h"

/* dir ("$VAR/sub" or a plain path) + "/" + name into buf; false when VAR is unset or the name does not fit. */
static bool join(char *buf, size_t size, const char *dir, const char *name) {
  const char *rest = dir, *root = "";
  char var[64];
  if (dir[0] == '$') {
    size_t n = strcspn(dir + 1, "/");
    if (n == 0 || n >= sizeof var) return false;
    memcpy(var, dir + 1, n);
    var[n] = '\0';
    root = getenv(var);
    if (!root || !root[0]) return false;
    rest = dir + 1 + n;
  }
  int w = snprintf(buf, size, "%s%s/%s", root, rest, name);
  return w > 0 && (size_t)w < size;
}

/* The i-th candidate name into buf (false: none at i, or skipped; *end set past the last). */
static bool candidate(const RtVendorLib *v, int i, char *buf, size_t size, bool *end, bool *from_env) {
  *end = false;
  *from_env = false;
  if (i == 0) {
    const char *e = v->env ? getenv(v->env) : NULL;
    if (!e || !e[0]) return false;
    *from_env = true;
    return snprintf(buf, size, "%s", e) > 0;
  }
  int ns = 0, nd = 0;
  while (v->sonames && v->sonames[ns]) ns++;
  while (v->dirs && v->dirs[nd]) nd++;
  int j = i - 1;
  if (j < ns) return snprintf(buf, size, "%s", v->sonames[j]) > 0;
  j -= ns;
  if (j >= ns * nd) {
    *end = true;
    return false;
  }
  return join(buf, size, v->dirs[j / ns], v->sonames[j % ns]);
}

int rt_vendor_lib_candidates(const RtVendorLib *v, void (*f)(const char *name, void *arg), void *arg) {
  char name[512];
  int count = 0;
  bool end = false, from_env;
  for (int i = 0; !end; i++)
    if (candidate(v, i, name, sizeof name, &end, &from_env)) {
      if (f) f(name, arg);
      count++;
    }
  return count;
}

void *rt_dlopen_first(const RtVendorLib *v, char *path, size_t path_size, Diag *d) {
  char name[512], tried[1500] = "", refused[700] = "";
  size_t nt = 0;
  bool end = false, from_env = false;
  for (int i = 0; !end; i++) {
    if (!candidate(v, i, name, sizeof name, &end, &from_env)) continue;
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
      if (nt < sizeof tried)
        nt += (size_t)snprintf(tried + nt, sizeof tried - nt, "%s%s%s%s", nt ? ", " : "", from_env ? v->env : "",
                               from_env ? "=" : "", name);
      continue;
    }
    const char *why = v->accept ? v->accept(lib, v->arg) : NULL;
    if (!why) {
      if (path && path_size) snprintf(path, path_size, "%s", name);
      return lib;
    }
    dlclose(lib);
    if (!refused[0]) snprintf(refused, sizeof refused, "%s library %s %s", v->what, name, why);
    if (from_env) break; /* a named file that is refused ends the search */
  }
  if (refused[0]) {
    diag_error(d, LOOM_ERR_UNSUPPORTED, "%s%s%s", refused, v->env ? "; unset or correct " : "",
               v->env ? v->env : "");
    return NULL;
  }
  diag_error(d, LOOM_ERR_UNSUPPORTED, "%s need %s, which was not found (tried %s); %s%s%s%s", v->purpose, v->what,
             tried[0] ? tried : "nothing",
             v->install ? v->install : "install it", v->env ? " or set " : "", v->env ? v->env : "",
             v->env ? " to the library's file" : "");
  return NULL;
}

/* ---- bindings: a struct of function pointers resolved by name ------------------------------------------ */
typedef struct Resolve {
  const RtVendorLib *v;
  void *fns;
  RtLoadedLib *out;
} Resolve;

/* rt_dlopen_first's accept: every symbol into the binding's struct, in order (function pointers copied
 * as dlsym returns them, as POSIX allows). */
static const char *resolve_symbols(void *lib, void *arg) {
  Resolve *r = arg;
  for (int i = 0; r->v->symbols[i]; i++) {
    const char *name = r->v->symbols[i];
    bool optional = name[0] == '?';
    void *p = dlsym(lib, name + optional);
    if (!p && !optional) {
      snprintf(r->out->fail.msg, sizeof r->out->fail.msg, "has no %s (%s)", name, r->v->too_old);
      return r->out->fail.msg;
    }
    memcpy((char *)r->fns + (size_t)i * sizeof p, &p, sizeof p);
  }
  return NULL;
}

void rt_vendor_lib_load(const RtVendorLib *v, void *fns, RtLoadedLib *out) {
  Resolve r = {v, fns, out};
  RtVendorLib with = *v;
  with.accept = resolve_symbols, with.arg = &r;
  Diag d = {.status = LOOM_OK};
  out->lib = rt_dlopen_first(&with, out->path, sizeof out->path, &d);
  out->fail = d;
}

LoomStatus rt_vendor_lib_probe(const RtVendorLib *v, size_t fns_size, char *path, size_t size, Diag *d) {
  RtLoadedLib *l = calloc(1, sizeof *l);
  void *fns = calloc(1, fns_size);
  LoomStatus st = LOOM_OK;
  if (!l || !fns) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  else {
    rt_vendor_lib_load(v, fns, l);
    if ((st = l->fail.status) != LOOM_OK) diag_error(d, st, "%s", l->fail.msg);
    else if (path && v->version) snprintf(path, size, "%s (version %lld)", l->path, v->version(fns));
    else if (path) snprintf(path, size, "%s", l->path);
    rt_vendor_lib_close(l);
  }
  free(fns);
  free(l);
  return st;
}

void rt_vendor_lib_close(RtLoadedLib *l) {
  if (l->lib) dlclose(l->lib);
  l->lib = NULL;
}
