// in: float32 x
// out: float32 z
// expect: err_kernel:4:6: error: 'x' is not a raw parameter and cannot be indexed; declare it 'raw float x'
z = x[i];
