// in: floot32 x
// out: float32 z
// expect: err_kernel(in_params):1:1: error: unknown type 'floot32' (a NumPy dtype name like float32, or a one-letter type placeholder like T)
z = x;
