/* SPDX-License-Identifier: Apache-2.0 */
/* user_kernel.h: private interface of the user kernel files: user_kernel.c (kernel objects, binding of
 * type placeholders, the instantiation cache, running a call's kernel on its device) and
 * user_kernel_call.c (a call's iteration space and its kernel IR). See user_kernel.c's top comment. */
#ifndef LOOM_RUNTIME_USER_KERNEL_H
#define LOOM_RUNTIME_USER_KERNEL_H

#include <pthread.h>

#include "frontend/snippet.h"
#include "ir/snippet.h"
#include "runtime/device.h"

#define UK_MAX_PARAMS 64
#define UK_MAX_PH 26

#define UK_MAX_ENTRIES 16
#define UK_KEY_MAX (16 + UK_MAX_PH + 2 * UK_MAX_PARAMS * (1 + LOOM_MAX_RANK))

typedef struct UkEntry UkEntry;
typedef struct UkInst UkInst;

struct LoomUserKernel {
  LoomContext *ctx;
  bool reduction;
  bool reduce_dims;
  Arena arena; /* params and texts */
  char *name, *operation, *preamble, *map, *reduce, *post, *identity, *reduce_type;
  char *loop_prep, *after_loop; /* elementwise: per-worker regions ("" for none) */
  FeParamList in, out;
  int32_t nph;
  const char *ph[UK_MAX_PH]; /* placeholder names */
  pthread_mutex_t lock; /* guards insts and entries */
  UkInst *insts;
  UkEntry *entries;
  int32_t nentries;
};

/* The arrays of a call, in buffer order (ins then outs), and what the binding made of them. */
typedef struct UkCall {
  LoomUserKernel *k;
  int32_t n;                       /* in.n + out.n */
  LoomArray *arr[2 * UK_MAX_PARAMS];
  const FeParam *par[2 * UK_MAX_PARAMS];
  LoomDType pdt[2 * UK_MAX_PARAMS]; /* param dtypes after binding */
  uint8_t bound[UK_MAX_PH];
  bool allocated[2 * UK_MAX_PARAMS];
  StrBuf *dump;      /* loom_user_kernel_dump: the kernel's text goes here and nothing runs */
  LoomDumpKind dkind;
} UkCall;

/* What a call's kernel IR depends on besides the binding (see the top comment). */
typedef struct UkSig {
  int32_t ndim, nkeep;
  uint8_t index_bits;
  uint8_t dtype[2 * UK_MAX_PARAMS];
  uint8_t layout[2 * UK_MAX_PARAMS][LOOM_MAX_RANK];
} UkSig;

/* Builds the kernel IR of a call for sig into a (ew_build, red_build in user_kernel_call.c). */
typedef LoomStatus (*UkBuildFn)(UkCall *c, const SnModule *m, const UkSig *sig, Arena *a, KernelIr **out, Diag *d);

/* ---- user_kernel.c ------------------------------------------------------------------------------------- */
/* Checks the arrays, binds the placeholders (outputs first) and gets the instantiation. */
LoomStatus uk_prepare(UkCall *c, const LoomArray *in, LoomArray *out, const SnModule **mod, Diag *d);
/* Whether every array given is on one device; *kind / *index get it. */
LoomStatus uk_common_device(UkCall *c, LoomDeviceKind *kind, int32_t *index, Diag *d);
/* The out params: allocated with the result's shape when not given (raw ones too, as CuPy's), else the non-raw ones
 * checked against it. */
LoomStatus uk_prepare_outs(UkCall *c, int ndim, const int64_t *shape, LoomDeviceKind dk, int32_t di, Diag *d);
/* Runs the call's kernel (sk bound, sig its signature): through the instantiation cache when it can be
 * used, else built afresh by build. */
LoomStatus uk_run_sig(UkCall *c, const SnModule *m, const UkSig *sig, SchedKernel *sk, LoomDeviceKind dk, int32_t di,
                      UkBuildFn build, Arena *a, Diag *d);

/* ---- user_kernel_call.c ------------------------------------------------------------------------------- */
LoomStatus uk_ew_call(LoomUserKernel *uk, int32_t nin, const LoomArray *in, int32_t nout, LoomArray *out, int64_t size,
                      Arena *a, UkCall *c, Diag *d);
LoomStatus uk_red_call(LoomUserKernel *uk, const LoomArray *in, LoomArray *out, int32_t naxes, const int32_t *axes,
                       int keepdims, Arena *a, UkCall *c, Diag *d);

#endif /* LOOM_RUNTIME_USER_KERNEL_H */
