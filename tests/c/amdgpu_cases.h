/* amdgpu_cases.h: test_amdgpu.c's kernels beyond the golden files (graph text, ir/parse.c's syntax): the
 * GPU strategies and features the golden files do not reach, then complex64 / complex128 (the complex
 * sequences of codegen/lower_complex.c over ocml's f64 functions: complex64's are computed in float64 and
 * rounded once; 8- and 16-byte elements in the vector entries; reductions whose accumulator is two floats
 * or two doubles through the wave shuffles and LDS) and bfloat16 (stored as 16 bits, computed in float32,
 * rounded to nearest even on store). Each case is compiled for NVIDIA and the AMD chips and checked like a
 * golden kernel, the traffic per point included. */
#ifndef LOOM_TESTS_AMDGPU_CASES_H
#define LOOM_TESTS_AMDGPU_CASES_H

static const struct {
  const char *name, *graph;
  const char *digest; /* tests/golden/gpu/<digest>.txt (NULL: none): the NVIDIA figures where CI has no
                       * libdevice to compile math for NVPTX, and the AMD IR's digest */
} cases[] = {
    {"argmax axis 1 (row, argmax through shuffles of value and index)",
     "%0 = input 0 f32 [64,300] strides [300,1]\n%1 = reduce argmax i64 [64] %0 axes [1]\noutput %1\n", NULL},
    {"int64 full sum (64-bit shuffles, vector part entry)",
     "%0 = input 0 i64 [100000] strides [1]\n%1 = reduce sum i64 [] %0 axes [0]\noutput %1\n", NULL},
    {"float64 sin and division (ocml f64, fdiv f64)",
     "%0 = input 0 f64 [1000] strides [1]\n%1 = input 1 f64 [1000] strides [1]\n%2 = sin f64 [1000] %0\n"
     "%3 = truediv f64 [1000] %2 %1\noutput %3\n", NULL},
    {"float32 division and sqrt (correctly rounded sequences)",
     "%0 = input 0 f32 [1000] strides [1]\n%1 = input 1 f32 [1000] strides [1]\n%2 = truediv f32 [1000] %0 %1\n"
     "%3 = sqrt f32 [1000] %2\noutput %3\n", NULL},
    {"int8 to float16 elementwise (narrow vector lanes)",
     "%0 = input 0 i8 [4096] strides [1]\n%1 = cast f16 [4096] %0\n%2 = mul f16 [4096] %1 %1\noutput %2\n", NULL},
    {"float32 cos, atan2, pow (large ocml functions)",
     "%0 = input 0 f32 [777] strides [1]\n%1 = input 1 f32 [777] strides [1]\n%2 = cos f32 [777] %0\n"
     "%3 = atan2 f32 [777] %2 %1\n%4 = pow f32 [777] %3 %1\noutput %4\n", NULL},
    {"variance over the last axis (three phases, cached row)",
     "%0 = input 0 f32 [32,1000] strides [1000,1]\n%1 = reduce mean f32 [32,1] %0 axes [1] keepdims\n"
     "%2 = broadcast f32 [32,1000] %1\n%3 = sub f32 [32,1000] %0 %2\n%4 = mul f32 [32,1000] %3 %3\n"
     "%5 = reduce mean f32 [32] %4 axes [1]\noutput %5\n", NULL},
    /* ---- complex64 and complex128 ---- */
    {"complex64 exp, log, sqrt (computed in float64: ocml f64, rounded once)",
     "%0 = input 0 c64 [4099] strides [1]\n%1 = exp c64 [4099] %0\n%2 = log c64 [4099] %1\n"
     "%3 = sqrt c64 [4099] %2\noutput %3\n", "case_c64_exp_log_sqrt"},
    {"complex128 exp, log, sqrt (ocml f64 in the complex sequences)",
     "%0 = input 0 c128 [4099] strides [1]\n%1 = exp c128 [4099] %0\n%2 = log c128 [4099] %1\n"
     "%3 = sqrt c128 [4099] %2\noutput %3\n", "case_c128_exp_log_sqrt"},
    {"complex64 divide, multiply, abs (two outputs, one real)",
     "%0 = input 0 c64 [5000] strides [1]\n%1 = input 1 c64 [5000] strides [1]\n%2 = truediv c64 [5000] %0 %1\n"
     "%3 = mul c64 [5000] %2 %0\n%4 = abs f32 [5000] %3\noutput %3\noutput %4\n", "case_c64_div_mul_abs"},
    {"complex128 divide, power, abs, angle parts",
     "%0 = input 0 c128 [3000] strides [1]\n%1 = input 1 c128 [3000] strides [1]\n%2 = truediv c128 [3000] %0 %1\n"
     "%3 = pow c128 [3000] %2 %1\n%4 = abs f64 [3000] %3\n%5 = real f64 [3000] %3\n%6 = imag f64 [3000] %3\n"
     "%7 = atan2 f64 [3000] %6 %5\n%8 = add f64 [3000] %4 %7\noutput %8\n", "case_c128_div_pow_abs"},
    {"complex casts: float32 -> complex64 -> complex128, conj, sin, tanh",
     "%0 = input 0 f32 [2048] strides [1]\n%1 = input 1 c64 [2048] strides [1]\n%2 = cast c64 [2048] %0\n"
     "%3 = add c64 [2048] %2 %1\n%4 = cast c128 [2048] %3\n%5 = conj c128 [2048] %4\n%6 = sin c128 [2048] %5\n"
     "%7 = tanh c128 [2048] %6\noutput %7\n", "case_complex_casts"},
    {"complex128 -> complex64 and -> bool, broadcast row of complex64",
     "%0 = input 0 c128 [64,500] strides [500,1]\n%1 = input 1 c64 [500] strides [1]\n%2 = cast c64 [64,500] %0\n"
     "%3 = broadcast c64 [64,500] %1\n%4 = mul c64 [64,500] %2 %3\n%5 = cast b1 [64,500] %0\noutput %4\noutput %5\n",
     "case_c128_to_c64_bool"},
    {"complex64 row sum (two-float accumulator through the shuffles)",
     "%0 = input 0 c64 [64,300] strides [300,1]\n%1 = reduce sum c64 [64] %0 axes [1]\noutput %1\n",
     "case_c64_row_sum"},
    {"complex128 full sum (split: part and finish of a 16-byte accumulator)",
     "%0 = input 0 c128 [100000] strides [1]\n%1 = reduce sum c128 [] %0 axes [0]\noutput %1\n", "case_c128_full_sum"},
    {"complex64 column mean",
     "%0 = input 0 c64 [1000,64] strides [64,1]\n%1 = reduce mean c64 [64] %0 axes [0]\noutput %1\n",
     "case_c64_col_mean"},
    {"complex128 row product and max (lexicographic), argmin",
     "%0 = input 0 c128 [32,777] strides [777,1]\n%1 = reduce prod c128 [32] %0 axes [1]\n"
     "%2 = reduce max c128 [32] %0 axes [1]\n"
     "%3 = reduce argmin i64 [32] %0 axes [1]\noutput %1\noutput %2\noutput %3\n",
     "case_c128_row_prod_max_argmin"},
    {"complex64 row normalization (cached row: x / sum(|x|))",
     "%0 = input 0 c64 [64,1024] strides [1024,1]\n%1 = abs f32 [64,1024] %0\n"
     "%2 = reduce sum f32 [64,1] %1 axes [1] keepdims\n%3 = cast c64 [64,1] %2\n%4 = broadcast c64 [64,1024] %3\n"
     "%5 = truediv c64 [64,1024] %0 %4\noutput %5\n", "case_c64_row_norm"},
    /* ---- bfloat16 ---- */
    {"bfloat16 from float32, multiply, exp (float32 math, rounded on store)",
     "%0 = input 0 f32 [4096] strides [1]\n%1 = cast bf16 [4096] %0\n%2 = mul bf16 [4096] %1 %1\n"
     "%3 = exp bf16 [4096] %2\noutput %3\n", "case_bf16_mul_exp"},
    {"bfloat16 to float64 and int32, from float64 and int64",
     "%0 = input 0 bf16 [3001] strides [1]\n%1 = input 1 f64 [3001] strides [1]\n%2 = input 2 i64 [3001] strides [1]\n"
     "%3 = cast f64 [3001] %0\n%4 = cast i32 [3001] %0\n%5 = cast bf16 [3001] %1\n%6 = cast bf16 [3001] %2\n"
     "%7 = add bf16 [3001] %5 %6\noutput %3\noutput %4\noutput %7\n", "case_bf16_casts"},
    {"bfloat16 row sum",
     "%0 = input 0 bf16 [64,300] strides [300,1]\n%1 = reduce sum bf16 [64] %0 axes [1]\noutput %1\n",
     "case_bf16_row_sum"},
    {"bfloat16 full max",
     "%0 = input 0 bf16 [100000] strides [1]\n%1 = reduce max bf16 [] %0 axes [0]\noutput %1\n", "case_bf16_full_max"},
    {"bfloat16 column mean",
     "%0 = input 0 bf16 [1000,64] strides [64,1]\n%1 = reduce mean bf16 [64] %0 axes [0]\noutput %1\n",
     "case_bf16_col_mean"},
    {"bfloat16 sqrt, division and a comparison",
     "%0 = input 0 bf16 [4096] strides [1]\n%1 = input 1 bf16 [4096] strides [1]\n%2 = sqrt bf16 [4096] %0\n"
     "%3 = truediv bf16 [4096] %2 %1\n%4 = lt b1 [4096] %3 %0\noutput %3\noutput %4\n", "case_bf16_sqrt_div_lt"},
};


#endif /* LOOM_TESTS_AMDGPU_CASES_H */
