// in: float32 x, raw float32 w
// out: float32 y
// loop_prep: float w = 1;
// expect: err_kernel(loop_prep):1:7: error: redefinition of 'w'
y = x;
