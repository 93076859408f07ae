// in: T x, T y
// out: T z
// bind: T=float64
T d = x - y;
z = d * d + T(1) + fabs(d) + pow(d, 2) + fmin(x, y) + min(x, y) + atan2(x, y) + (isnan(x) ? 1 : 0);
