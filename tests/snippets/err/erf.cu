// in: float32 x
// out: float32 z
// expect: err_kernel:4:5: error: 'erff' is not supported: loom has no erf operation
z = erff(x);
