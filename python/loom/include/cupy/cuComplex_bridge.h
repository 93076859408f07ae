// SPDX-License-Identifier: Apache-2.0
// loom/include/cupy/cuComplex_bridge.h: CUDA's cuComplex.h API on loom's complex type, for raw modules made with
// translate_cucomplex=True (python/loom/_raw.py puts `#include <cupy/cuComplex_bridge.h>` where the source
// includes <cuComplex.h>), so kernels written against cuComplex.h read complex64 / complex128 arrays and take
// complex scalars as loom's complex<float> / complex<double> (the same layout: two reals).
// Written for loom. The double-precision functions (cuCadd, ...) take complex<double>; a complex<float>
// argument converts implicitly, as code that mixes cuCadd with cuComplex values expects once translated.
#pragma once
#include <cupy/complex.cuh>

typedef thrust::complex<float> cuFloatComplex;
typedef thrust::complex<double> cuDoubleComplex;
typedef cuFloatComplex cuComplex;

__host__ __device__ static inline float cuCrealf(cuFloatComplex z) { return z.real(); }
__host__ __device__ static inline float cuCimagf(cuFloatComplex z) { return z.imag(); }
__host__ __device__ static inline cuFloatComplex make_cuFloatComplex(float re, float im) { return cuFloatComplex(re, im); }
__host__ __device__ static inline cuComplex make_cuComplex(float re, float im) { return cuComplex(re, im); }
__host__ __device__ static inline cuFloatComplex cuConjf(cuFloatComplex z) { return thrust::conj(z); }
__host__ __device__ static inline cuFloatComplex cuCaddf(cuFloatComplex a, cuFloatComplex b) { return a + b; }
__host__ __device__ static inline cuFloatComplex cuCsubf(cuFloatComplex a, cuFloatComplex b) { return a - b; }
__host__ __device__ static inline cuFloatComplex cuCmulf(cuFloatComplex a, cuFloatComplex b) { return a * b; }
__host__ __device__ static inline cuFloatComplex cuCdivf(cuFloatComplex a, cuFloatComplex b) { return a / b; }
__host__ __device__ static inline float cuCabsf(cuFloatComplex z) { return thrust::abs(z); }
__host__ __device__ static inline cuFloatComplex cuCfmaf(cuFloatComplex a, cuFloatComplex b, cuFloatComplex c) {
  return a * b + c;
}

__host__ __device__ static inline double cuCreal(cuDoubleComplex z) { return z.real(); }
__host__ __device__ static inline double cuCimag(cuDoubleComplex z) { return z.imag(); }
__host__ __device__ static inline cuDoubleComplex make_cuDoubleComplex(double re, double im) {
  return cuDoubleComplex(re, im);
}
__host__ __device__ static inline cuDoubleComplex cuConj(cuDoubleComplex z) { return thrust::conj(z); }
__host__ __device__ static inline cuDoubleComplex cuCadd(cuDoubleComplex a, cuDoubleComplex b) { return a + b; }
__host__ __device__ static inline cuDoubleComplex cuCsub(cuDoubleComplex a, cuDoubleComplex b) { return a - b; }
__host__ __device__ static inline cuDoubleComplex cuCmul(cuDoubleComplex a, cuDoubleComplex b) { return a * b; }
__host__ __device__ static inline cuDoubleComplex cuCdiv(cuDoubleComplex a, cuDoubleComplex b) { return a / b; }
__host__ __device__ static inline double cuCabs(cuDoubleComplex z) { return thrust::abs(z); }
__host__ __device__ static inline cuDoubleComplex cuCfma(cuDoubleComplex a, cuDoubleComplex b, cuDoubleComplex c) {
  return a * b + c;
}

__host__ __device__ static inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex z) { return cuDoubleComplex(z); }
__host__ __device__ static inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex z) { return cuFloatComplex(z); }
