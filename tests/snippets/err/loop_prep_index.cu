// in: float32 x
// out: float32 y
// loop_prep: long long first = i;
// expect: err_kernel(loop_prep):1:19: error: 'i' (the index of the current point) is not available in loop_prep; use it in the operation
y = x;
