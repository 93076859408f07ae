// in: float32 x
// out: float32 z
// expect: err_kernel:4:1: error: preprocessor directives are not supported in snippets (use constants or helper functions)
#define TWO 2
z = x * TWO;
