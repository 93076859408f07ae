// in: float32 x
// out: float32 z
// expect: err_kernel:4:5: error: 'pow' takes 2 arguments, 1 given
z = pow(x);
