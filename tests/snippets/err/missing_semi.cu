// in: float32 x
// out: float32 z
// expect: err_kernel:5:1: error: expected ';' before 'z'
float t = x
z = t;
