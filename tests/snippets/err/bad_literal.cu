// in: float32 x
// out: float32 z
// expect: err_kernel:4:5: error: integer literal '99999999999999999999' is too large
z = 99999999999999999999;
