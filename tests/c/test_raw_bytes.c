/* SPDX-License-Identifier: Apache-2.0 */
/* test_raw_bytes.c: by-value struct arguments of raw kernels (LOOM_RAW_ARG_BYTES, loom.h).
 *
 * Approach: a PTX kernel whose parameters are a 24-byte aligned .b8 block (a struct such as double3) and a
 * pointer; the argument checks run before any device work, so on a machine without a CUDA driver a struct
 * of the right size gets past them (the launch then fails for want of the driver: LOOM_ERR_UNSUPPORTED),
 * while a wrong size, 4 bytes for the .u64 (pointer) parameter, empty bytes and a float64 for the struct are refused
 * with a message naming the parameter. With a CUDA device the right-size launch succeeds.
 */
#include "test_common.h"

static const char ptx[] =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry k(.param .align 8 .b8 k_param_0[24], .param .u64 k_param_1) {\n"
    "  .reg .f64 %fd<2>;\n  .reg .b64 %rd<3>;\n"
    "  ld.param.f64 %fd1, [k_param_0+16];\n  ld.param.u64 %rd1, [k_param_1];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  st.global.f64 [%rd2], %fd1;\n  ret;\n}\n";

int main(void) {
  if (!tc_init()) return 1;
  LoomRawModule *m = NULL;
  LoomRawFunction *f = NULL;
  if (!CHECK_OK(loom_raw_module_create(tc_ctx, ptx, sizeof ptx - 1, LOOM_RAW_PTX, NULL, 0, &m)) ||
      !CHECK_OK(loom_raw_module_get_function(m, "k", &f)))
    return tc_finish();
  int32_t n = 0, sizes[2];
  LoomRawParamKind kinds[2];
  CHECK(loom_raw_function_params(f, &n, kinds, sizes, 2) == LOOM_OK && n == 2 && kinds[0] == LOOM_RAW_PARAM_ANY &&
            sizes[0] == 24, "params: n %d kind %d size %d", (int)n, (int)kinds[0], (int)sizes[0]);
  int32_t ncuda = 0;
  loom_device_count(tc_ctx, LOOM_DEVICE_CUDA, &ncuda);
  LoomArray out = {0};
  double rec[3] = {1.5, 2.5, 3.5}; /* double3 */
  out = (LoomArray){.dtype = LOOM_FLOAT64, .ndim = 1, .shape = {1}, .device = LOOM_DEVICE_CUDA};
  if (ncuda > 0) {
    if (!CHECK_OK(loom_array_alloc(tc_ctx, &out))) return tc_finish();
  } else { /* a stand-in device array: only its address would be read */
    out.data = (void *)(uintptr_t)0x10000;
  }
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  LoomRawArg a[2] = {{.kind = LOOM_RAW_ARG_BYTES, .bytes = rec, .nbytes = sizeof rec},
                     {.kind = LOOM_RAW_ARG_ARRAY, .array = &out}};
  LoomStatus s = loom_raw_function_launch(f, grid, block, 0, NULL, 2, a);
  if (ncuda > 0) {
    double got = 0;
    CHECK(s == LOOM_OK, "launch: %s", loom_last_error(tc_ctx));
    CHECK_OK(loom_device_synchronize(tc_ctx, LOOM_DEVICE_CUDA, 0));
    CHECK_OK(loom_memcpy(tc_ctx, &got, LOOM_DEVICE_HOST, 0, out.data, LOOM_DEVICE_CUDA, 0, sizeof got, NULL, 0));
    CHECK(got == 3.5, "the kernel read the struct's z: %g", got);
  } else {
    CHECK(s == LOOM_ERR_UNSUPPORTED, "a struct of the parameter's size passes the checks (then: %s, %s)",
          loom_status_name(s), loom_last_error(tc_ctx));
  }
  a[0].nbytes = 16;
  CHECK(loom_raw_function_launch(f, grid, block, 0, NULL, 2, a) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loom_last_error(tc_ctx), "a value of 24 bytes, got a by-value struct of 16 bytes"),
        "wrong size: %s", loom_last_error(tc_ctx));
  a[0].nbytes = 0;
  CHECK(loom_raw_function_launch(f, grid, block, 0, NULL, 2, a) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loom_last_error(tc_ctx), "no bytes"), "empty: %s", loom_last_error(tc_ctx));
  LoomRawArg b[2] = {{.kind = LOOM_RAW_ARG_BYTES, .bytes = rec, .nbytes = 24},
                     {.kind = LOOM_RAW_ARG_BYTES, .bytes = rec, .nbytes = 4}};
  CHECK(loom_raw_function_launch(f, grid, block, 0, NULL, 2, b) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loom_last_error(tc_ctx), "argument 1: the parameter is a pointer or 64-bit integer of 8 bytes, "
                                            "got a by-value struct of 4 bytes"),
        "4 bytes for a .u64: %s", loom_last_error(tc_ctx));
  LoomRawArg c[2] = {{.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_FLOAT64, .value.f = 1},
                     {.kind = LOOM_RAW_ARG_ARRAY, .array = &out}};
  CHECK(loom_raw_function_launch(f, grid, block, 0, NULL, 2, c) == LOOM_ERR_INVALID_ARGUMENT,
        "a float64 scalar for a 24-byte struct: %s", loom_last_error(tc_ctx));
  if (ncuda > 0) loom_array_free(tc_ctx, &out);
  loom_raw_module_destroy(m);
  return tc_finish();
}
