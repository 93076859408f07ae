// in: float32 x
// out: float32 y
// loop_prep: const float k = 2;
// expect: err_kernel:6:3: error: cannot assign to const variable 'k'
y = x * k;
k = 3;
