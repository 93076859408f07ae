// in: raw float32 x
// out: float32 z
// expect: err_kernel:4:5: error: raw parameter 'x' must be indexed, as in x[i]
z = x + 1;
