// in: float32 x
// out: float32 z
// expect: err_kernel:4:3: error: cannot assign to input parameter 'x' (only output parameters are writable)
x = 1;
