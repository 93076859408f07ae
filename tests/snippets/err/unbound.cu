// in: U x
// out: float32 z
// expect: err_kernel: type placeholder 'U' of parameter 'x' is not bound (pass an argument that fixes it)
z = x;
