// in: float32 x, float16 h, uint8 b
// out: float32 z
// CUDA spellings (f suffix), half and small ints promote.
z = sqrtf(x) + expf(x) + logf(x) + sinf(x) + cosf(x) + tanf(x) + fabsf(x) + fminf(x, 1.0f)
    + fmaxf(x, 0.f) + powf(x, 2.0f) + floorf(x) + ceilf(x) + truncf(x) + roundf(x) + rintf(x)
    + h * 2 + b / 2 + (b >> 1) + (int)(bool)b + 'a' + 1e-3f + 0x10 + 010 + 1ull + (x != x)
    + rsqrtf(x) + hypotf(x, x) + copysignf(x, -1.0f) + fmodf(x, 3.0f) + log1pf(x) + expm1f(x) /* comment */;
