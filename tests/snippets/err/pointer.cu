// in: float32 x
// out: float32 z
// expect: err_kernel:4:7: error: pointers are not supported in snippets (use raw parameters)
float *p = 0;
