// in: float32 x
// out: float32 z
// expect: err_kernel:4:8: error: unterminated comment
z = x; /* no end
