// in: float32 x
// out: float32 y
// loop_prep: float k = 2 float j = 3;
// expect: err_kernel(loop_prep):1:13: error: expected ';' before 'float'
y = x * k;
