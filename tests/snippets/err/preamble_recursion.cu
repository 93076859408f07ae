// in: float32 x
// out: float32 z
// preamble: float f(float v) { return v > 1 ? f(v - 1) : v; }
// expect: err_kernel(preamble):1:35: error: recursive calls are not supported ('f' calls itself)
z = f(x);
