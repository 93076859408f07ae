/* hip_libs.h: the values of ROCm 6's headers (hipblaslt.h, hipblas-common.h, hip/library_types.h, hipfft.h)
 * that the AMD device's library bindings pass (hip_blas.c, hip_fft.c). Loom builds without ROCm's headers;
 * these are ABI and do not change within a major version. Plain constants, no includes: the test doubles
 * of the libraries (tests/c/mock_hipblaslt.c, mock_hipfft.c) read them too. */
#ifndef LOOM_RUNTIME_HIP_LIBS_H
#define LOOM_RUNTIME_HIP_LIBS_H

enum {
  HL_R_32F = 0, HL_R_64F = 1, HL_R_16F = 2, HL_R_16BF = 14, HL_C_32F = 4, HL_C_64F = 5, /* hipDataType */
  HL_COMPUTE_32F = 2, HL_COMPUTE_64F = 7,                                        /* hipblasComputeType_t */
  HL_OP_N = 111, HL_OP_T = 112,                                                  /* hipblasOperation_t */
  HL_DESC_TRANSA = 0, HL_DESC_TRANSB = 1, HL_DESC_EPILOGUE = 2, HL_DESC_BIAS_POINTER = 3, /* MatmulDescAttributes */
  HL_LAYOUT_BATCH_COUNT = 0, HL_LAYOUT_STRIDED_BATCH_OFFSET = 1,                 /* MatrixLayoutAttribute */
  HL_PREF_MAX_WORKSPACE_BYTES = 1,                                               /* MatmulPreferenceAttributes */
  HL_EPILOGUE_DEFAULT = 1, HL_EPILOGUE_RELU = 2, HL_EPILOGUE_BIAS = 4, HL_EPILOGUE_RELU_BIAS = 6,
  HL_EPILOGUE_GELU = 32, HL_EPILOGUE_GELU_BIAS = 36,                             /* hipblasLtEpilogue_t */
  HL_STATUS_ALLOC_FAILED = 2, HL_STATUS_INVALID_VALUE = 3, HL_STATUS_NOT_SUPPORTED = 7, /* hipblasStatus_t */
};
enum { HF_R2C = 0x2a, HF_C2R = 0x2c, HF_C2C = 0x29, HF_D2Z = 0x6a, HF_Z2D = 0x6c, HF_Z2Z = 0x69 }; /* hipfftType */
enum { HF_FORWARD = -1, HF_BACKWARD = 1, HF_ALLOC_FAILED = 2 };

#endif /* LOOM_RUNTIME_HIP_LIBS_H */
