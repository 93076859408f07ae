/* vendor_lib.h: opening a vendor library (cuBLASLt, cuFFT, cuSOLVER, rocBLAS, hipFFT) at run time, the
 * one candidate loop every binding shares (vendor_lib.c).
 *
 * The candidates, in order: the file an environment variable names (LOOM_CUBLASLT, ...), each soname
 * bare (the loader's path, or a copy the process already holds: the Python package preloads pip
 * wheels'), then each soname in each directory of `dirs` ("$VAR/sub" takes VAR from the environment and
 * is skipped when VAR is unset). Each opens with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE (a vendor library
 * keeps threads and static state: it is never unmapped). `accept` resolves the functions the binding
 * uses; a library it refuses (too old, not that library) is closed and the search goes on, except for the
 * file the environment names: naming a file is a decision, so its refusal ends the search. No library:
 * LOOM_ERR_UNSUPPORTED with "<purpose> need <what>, which was not found (tried ...); <install> or set
 * <env> to the <file> file".
 */
#ifndef LOOM_RUNTIME_VENDOR_LIB_H
#define LOOM_RUNTIME_VENDOR_LIB_H

#include <stddef.h>

#include "ir/ir.h"

typedef struct RtVendorLib {
  const char *what;              /* "cuBLASLt": the library's name in messages */
  const char *purpose;           /* "matrix products on CUDA devices" */
  const char *install;           /* "install the CUDA toolkit's libcublas (or `pip install ...`)" */
  const char *env;               /* "LOOM_CUBLASLT": the variable naming the file, or NULL */
  const char *const *sonames;    /* NULL-terminated, most wanted first */
  const char *const *dirs;       /* NULL-terminated directories ("$CUDA_HOME/lib64", "/usr/local/cuda/lib64") */
  /* Resolves what the binding needs from lib into arg: NULL to take it, else why not ("has no cufftCreate
   * (CUDA 11 or later needed)"), which the failure message quotes after the file's name. */
  const char *(*accept)(void *lib, void *arg);
  void *arg;
  /* For rt_vendor_lib_load (which sets accept and arg itself): the functions the binding resolves, in the
   * order of its struct of function pointers (NULL-terminated; a name starting with '?' is optional: NULL
   * when the library lacks it), what a library missing a required one is ("CUDA 11 or later needed"),
   * and, optionally, the version rt_vendor_lib_probe reports, read through the resolved functions. */
  const char *const *symbols;
  const char *too_old;
  long long (*version)(const void *fns);
} RtVendorLib;

/* The first candidate that opens and is accepted: its handle, and its name in path (NULL: not wanted).
 * NULL with *d set (LOOM_ERR_UNSUPPORTED, what was tried and what to install) when there is none. */
void *rt_dlopen_first(const RtVendorLib *v, char *path, size_t path_size, Diag *d);

/* The candidate names rt_dlopen_first tries, in order, for tests and reports: calls f(name, arg) for
 * each; returns how many. */
int rt_vendor_lib_candidates(const RtVendorLib *v, void (*f)(const char *name, void *arg), void *arg);

/* A binding's library once loaded: the handle, its file, or why loading failed (fail.status != LOOM_OK,
 * reported on every use). */
typedef struct RtLoadedLib {
  void *lib;
  char path[512];
  Diag fail;
} RtLoadedLib;

/* Finds v's library (rt_dlopen_first) and resolves v->symbols into fns, the binding's struct of function
 * pointers (one per symbol, in order): the library's handle into out, or out->fail says what was tried
 * and what to install. A library missing a required symbol is refused: "has no <name> (<too_old>)". */
void rt_vendor_lib_load(const RtVendorLib *v, void *fns, RtLoadedLib *out);
/* Loads v's library as a binding's first use would, for tests and loom's configuration report: path gets
 * the file (and " (version N)" with v->version); LOOM_ERR_UNSUPPORTED and the binding's message when it is
 * missing or refused. fns_size: the binding's struct of function pointers. The library is closed again. */
LoomStatus rt_vendor_lib_probe(const RtVendorLib *v, size_t fns_size, char *path, size_t size, Diag *d);
/* Closes a loaded library (nothing when it did not load). */
void rt_vendor_lib_close(RtLoadedLib *l);

#endif /* LOOM_RUNTIME_VENDOR_LIB_H */
