// in: T x, raw T w
// out: T y, raw int64 counts
// bind: T=float32
// loop_prep: const T scale = w[0] * 2; long long seen = 0; T acc; for (int j = 0; j < 3; j++) acc += w[j % w.size()];
// after_loop: if (seen > 0) counts[seen % counts.size()] += seen; acc = 0;
// loop_prep's top-level variables are per-worker state used by the operation and after_loop.
seen++;
acc = acc * 0.5f + x;
y = x * scale + acc;
