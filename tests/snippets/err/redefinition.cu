// in: float32 x
// out: float32 z
// expect: err_kernel:4:7: error: redefinition of 'x'
float x = 2;
