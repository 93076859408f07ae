// in: float32 x
// out: float32 z
// expect: err_kernel:4:9: error: undeclared identifier 'yy'
z = x + yy;
