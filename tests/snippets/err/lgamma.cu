// in: float32 x
// out: float32 z
// expect: err_kernel:4:5: error: 'lgammaf' is not supported: loom has no lgamma operation
z = lgammaf(x);
