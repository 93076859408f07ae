// in: float32 x
// out: float32 z
// expect: err_kernel:4:10: error: 'break' outside a loop
z = x;   break;
