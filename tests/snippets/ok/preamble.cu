// in: float32 x
// out: float32 z
// preamble: static __device__ __forceinline__ float sq(float v) { return v * v; } inline int clampi(int a, int lo, int hi) { if (a < lo) return lo; if (a > hi) return hi; return a; } __device__ void nothing() { return; }
nothing();
z = sq(x) + clampi((int)x, 0, 10);
