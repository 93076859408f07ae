/* SPDX-License-Identifier: Apache-2.0 */
/* pipeline.c: every LLVM pass pipeline of the backends runs through cg_run_pipeline, which keeps LLVM 19's
 * SLP vectorizer away from the kernels it miscompiles.
 *
 * The bug: SLP's minimum-bit-width analysis narrows `uitofp (sext X)` to `uitofp X`. Four scalar
 * `sext i16 -> i64; uitofp i64 -> double` become `uitofp <4 x i16>` (opt-19 -passes=slp-vectorizer), so an
 * int16 -18115 cast to uint64 and then to float64 gives 47421.0 instead of 2^64 - 18115; i8 -> i32 -> float
 * likewise. scripts/fuzz_numpy.py found it (seed 6019768508871736576: where(c, x, x.astype(uint64)) of a
 * 2-d broadcast, whose row-invariant conversions the host kernel runs as straight-line code that SLP
 * vectorized); tests/python/test_signed_unsigned_casts.py holds the cases. A value of an unsigned dtype is
 * sign-extended only after a cast from a signed integer to an unsigned one, so such kernels are optimized
 * without SLP; the others keep it (turning it off everywhere cost the host suite 13 % in geometric mean,
 * transpose_add 2.4x: its tiles are SLP's).
 *
 * How: LLVM 19 adds the SLP pass to default<O3> whatever LLVMPassBuilderOptionsSetSLPVectorization says,
 * and the pass obeys only the global option -vectorize-slp. So a kernel without SLP takes a write lock,
 * sets the option off, runs its pipeline and sets it back; every other pipeline holds a read lock while
 * it runs, so no pipeline ever sees the option in the wrong state. */
#include <pthread.h>

#include <llvm-c/Support.h>

#include "codegen/cg_llvm.h"

static pthread_rwlock_t slp_lock = PTHREAD_RWLOCK_INITIALIZER;

bool cg_slp_ok(const KernelIr *k) {
  if (!k) return true;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind == KI_CAST && in->src[0] >= 0 && dtype_kind((LoomDType)in->dtype) == DK_UINT &&
        dtype_kind((LoomDType)k->instrs[in->src[0]].dtype) == DK_INT)
      return false;
  }
  return true;
}

static void set_slp(bool on) {
  const char *argv[2] = {"loom", on ? "-vectorize-slp=true" : "-vectorize-slp=false"};
  LLVMParseCommandLineOptions(2, argv, "");
}

LLVMErrorRef cg_run_pipeline(LLVMModuleRef mod, const char *passes, LLVMTargetMachineRef tm,
                             LLVMPassBuilderOptionsRef po, const KernelIr *k) {
  bool slp = cg_slp_ok(k);
  if (slp) pthread_rwlock_rdlock(&slp_lock);
  else {
    pthread_rwlock_wrlock(&slp_lock);
    set_slp(false);
  }
  LLVMErrorRef e = LLVMRunPasses(mod, passes, tm, po);
  if (!slp) set_slp(true);
  pthread_rwlock_unlock(&slp_lock);
  return e;
}
