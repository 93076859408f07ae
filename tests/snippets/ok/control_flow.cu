// in: float32 x, int32 k
// out: float64 z
// A loop with break/continue, a do-while, a ternary and compound assignments.
double acc = 0.0;
for (int j = 0; j < k; ++j) {
  if (j % 3 == 0) continue;
  if (j > 100) break;
  acc += x * j;
}
int m = 3;
do { m--; } while (m > 0);
unsigned int u = 7u;
u <<= 2; u ^= 0x5; u %= 3;
z = acc > 0 ? acc : -acc + (double)u + static_cast<float>(m);
