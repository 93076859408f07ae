// in: raw float32 x, int64 k
// out: raw float32 y
// CuPy-style raw indexing with _ind.size(), n and x.size().
y[i] = x[n - 1 - i] + x[(i + k) % x.size()];
y[i] += 1.0f;
y[i * 2 % _ind.size()]++;
