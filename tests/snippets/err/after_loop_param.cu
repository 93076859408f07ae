// in: float32 x
// out: float32 y, raw float32 r
// loop_prep: float s = 0;
// after_loop: r[0] = s + y;
// expect: err_kernel(after_loop):1:12: error: parameter 'y' is not available in after_loop: it is one element per point, used in the operation (after_loop sees raw parameters, _ind.size() and the variables loop_prep declares)
s += x;
y = s;
