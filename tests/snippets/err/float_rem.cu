// in: float32 x
// out: float32 z
// expect: err_kernel:4:7: error: invalid operands to '%' (have 'float' and 'int'): use fmod for floating point
z = x % 2;
