"""workloads_probe.py: a second table of workloads, kept OUT of the suite that the compiler is tuned on.

Issue 11 says the suite will be checked again with workloads and shapes that are not in it. This table is
that check, run by the same harness (`run.py --table probe`, `diag_pair.py` takes its names too): everyday
expressions of the same families at shapes the suite does not use (odd sizes that are no power of two,
3-d reductions over other axes, rectangular transposes, short odd rows, mid-sized arrays, channel-last
uint8 images, int32/int64 integer work, float64 row work, scans). Tuning a mechanism on one of these
makes it a suite workload: move it to workloads.py and write a new probe in its place.
Same rules as workloads.py (functions of `xp`, NumPy syntax, Python scalar constants).
"""
from . import workloads as W
from .workloads import F16, F32, F64, I32, I64, In, ROWNORM

_PROBE_DIMS = {
    "cpu": dict(PR=3001, PC=1777, PA=24, PB=999, PM=257, PN=5_000_003, PMID=65_536, PSR=700_001, PSC=7,
                PLR=3, PLC=3_000_017, PH=1080, PW=1920, PLN=256, PLD=768, PB4=8, PH4=12, PT4=512, PD4=64, PE=50_000,
                PS=2048, PG=1 << 20, PV=2003, PFR=4001, PFC=1000),
    "h200": dict(PR=20_011, PC=7_777, PA=96, PB=1999, PM=1031, PN=100_000_007, PMID=65_536, PSR=10_000_019,
                 PSC=7, PLR=3, PLC=50_000_017, PH=4320, PW=7680, PLN=256, PLD=768, PB4=32, PH4=16, PT4=1024,
                 PD4=128, PE=1_000_000, PS=8192, PG=1 << 24, PV=20_011, PFR=200_003, PFC=1000),
    "test": dict(PR=37, PC=29, PA=3, PB=11, PM=13, PN=1001, PMID=515, PSR=101, PSC=7, PLR=3, PLC=1003,
                 PH=9, PW=14, PLN=5, PLD=24, PB4=2, PH4=3, PT4=5, PD4=4, PE=40, PS=33, PG=100, PV=29, PFR=7, PFC=40),
}
W.add_dims(_PROBE_DIMS)

WORKLOADS = []
probe = W.registrar(WORKLOADS)


# ---- activations at an odd 1-d size ----------------------------------------------------------------------
@probe("activation", "LeakyReLU(0.01) (torch nn.LeakyReLU default)", [F32("PN")], 1,
       native={"torch": lambda t, x: t.nn.functional.leaky_relu(x, 0.01)})
def leaky_relu(xp, x):
    return xp.where(x > 0, x, 0.01 * x)


@probe("activation", "hard-swish of MobileNetV3 (Howard et al. 2019; torch F.hardswish)", [F32("PN")], 1,
       native={"torch": lambda t, x: t.nn.functional.hardswish(x)})
def hardswish(xp, x):
    return x * xp.clip(x + 3.0, 0.0, 6.0) * (1.0 / 6.0)


@probe("activation", "softplus in its overflow-safe form (JAX jax.nn.softplus = logaddexp(x, 0))",
       [F32("PN")], 1, native={"torch": lambda t, x: t.nn.functional.softplus(x)})
def softplus(xp, x):
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0.0)


@probe("activation", "ELU (Clevert et al. 2016; torch F.elu, alpha=1)", [F32("PN")], 1,
       native={"torch": lambda t, x: t.nn.functional.elu(x)})
def elu(xp, x):
    return xp.where(x > 0, x, xp.expm1(x))


@probe("activation", "SiLU on a mid-sized activation (65536 floats: thread start-up vs work)", [F32("PMID")], 1)
def silu_mid(xp, x):
    return x / (1.0 + xp.exp(-x))


# ---- broadcasts and transposes at odd shapes -------------------------------------------------------------
@probe("broadcast", "per-row offset on an odd-shaped matrix: x - b[:, None] (centering rows)",
       [F32("PR", "PC"), F32("PR")], 1)
def row_offset_odd(xp, x, b):
    return x - b[:, None]


@probe("broadcast", "outer product of two odd-length vectors (numpy.outer), rectangular",
       [F32("PR"), F32("PC")], 1)
def outer_mul_rect(xp, a, b):
    return a[:, None] * b[None, :]


@probe("broadcast", "image preprocessing, channel-last uint8 HxWx3 to normalized float32 "
       "(torchvision Normalize after ToTensor, ImageNet mean/std)",
       [In(("PH", "PW", 3), "uint8", gen="int", lo=0, hi=256), F32(3, gen="uniform", lo=0.4, hi=0.5),
        F32(3, gen="uniform", lo=0.2, hi=0.3)], 1)
def image_normalize_hwc(xp, img, mean, std):
    return (xp.astype(img, xp.float32) * (1.0 / 255.0) - mean) / std


@probe("strided", "rectangular transpose times a matrix: x.T * y (x stored (cols, rows))",
       [F32("PC", "PR"), F32("PR", "PC")], 1)
def transpose_mul_rect(xp, x, y):
    return x.T * y


@probe("strided", "every third column, scaled: x[:, ::3] * 2 + 1 (decimation of channels)",
       [F32("PR", "PC")], 1)
def every_third_col(xp, x):
    return x[:, ::3] * 2.0 + 1.0


# ---- reductions over other axes and shapes --------------------------------------------------------------
@probe("reduce", "max over the middle axis of a 3-d array (max-pooling over time of (batch, time, feature))",
       [F32("PA", "PB", "PM")], 1)
def max_mid_3d(xp, x):
    return xp.max(x, axis=1)


@probe("reduce", "sum over axes (0, 2) of a 3-d array (bias gradient of a Conv1d: (batch, channels, length))",
       [F32("PA", "PB", "PM")], 1)
def sum_axes_0_2(xp, x):
    return xp.sum(x, axis=(0, 2))


@probe("reduce", "column minimum of an int32 matrix (per-feature min of a count table)",
       [I32("PR", "PC", gen="int", lo=-1000, hi=1000)], 1)
def min_cols_int32(xp, x):
    return xp.min(x, axis=0)


@probe("reduce", "rows with a NaN: any(isnan(x), axis=1) (pandas DataFrame.isna().any(axis=1))",
       [F32("PR", "PC")], 1)
def any_nan_rows(xp, x):
    return xp.any(xp.isnan(x), axis=1)


@probe("reduce", "sum of three very long rows (per-channel total of long audio signals)", [F32("PLR", "PLC")], 1)
def sum_long_rows(xp, x):
    return xp.sum(x, axis=1)


@probe("reduce", "mean over the last axis of a 3-d array minus it: x - x.mean(-1) (centering features)",
       [F32("PA", "PB", "PM")], 1, ideal_why=ROWNORM)
def center_last_3d(xp, x):
    return x - xp.mean(x, axis=-1, keepdims=True)


# ---- normalizations ---------------------------------------------------------------------------------------
@probe("norm", "logsumexp of each row (scipy.special.logsumexp(axis=-1), stable form)", [F32("PR", "PC")], 1,
       ideal_why=ROWNORM, native={"torch": lambda t, x: t.logsumexp(x, dim=-1)})
def logsumexp_rows(xp, x):
    m = xp.max(x, axis=-1, keepdims=True)
    return xp.log(xp.sum(xp.exp(x - m), axis=-1)) + m[:, 0]


@probe("norm", "standardize columns (sklearn StandardScaler.fit_transform): (x - mean_0) / (std_0 + eps)",
       [F32("PR", "PC")], 1, ideal_why="one kernel: its phases (mean, std, the output) walk the same band of columns")
def standardize_cols(xp, x):
    mu = xp.mean(x, axis=0)
    return (x - mu) / (xp.std(x, axis=0) + 1e-5)


@probe("norm", "L1-normalize short odd rows (700001 x 7): x / sum(|x|) per row (sklearn normalize(norm='l1'))",
       [F32("PSR", "PSC")], 1, ideal_why=ROWNORM)
def l1_normalize_short(xp, x):
    return x / xp.sum(xp.abs(x), axis=-1, keepdims=True)


@probe("norm", "BERT-base LayerNorm on one short batch (256 x 768: small-array overhead)",
       [F32("PLN", "PLD"), F32("PLD"), F32("PLD")], 1, ideal_why=ROWNORM,
       native={"torch": lambda t, x, w, b: t.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)})
def layernorm_small(xp, x, w, b):
    mu = xp.mean(x, axis=-1, keepdims=True)
    d = x - mu
    return d / xp.sqrt(xp.mean(d * d, axis=-1, keepdims=True) + 1e-5) * w + b


@probe("norm", "softmax of float16 attention scores over 1000 keys (half-precision inference, rows too short "
       "for a block per row)", [F16("PFR", "PFC")], 1, ideal_why=ROWNORM,
       native={"torch": lambda t, x: t.softmax(x, dim=-1)})
def softmax_f16_keys(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


@probe("norm", "log-softmax of float16 router logits, 16 experts per token (MoE gate in half precision)",
       [F16("SR", "SC")], 1, ideal_why=ROWNORM,
       native={"torch": lambda t, x: t.log_softmax(x, dim=-1)})
def router_log_softmax_f16(xp, x):
    z = x - xp.max(x, axis=-1, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=-1, keepdims=True))


@probe("norm", "softmax of float64 rows (scipy.special.softmax(axis=1) on a float64 score matrix)",
       [F64("PR", "PC")], 1, ideal_why=ROWNORM)
def softmax_f64(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


# ---- integers, dtypes, where ------------------------------------------------------------------------------
@probe("int", "bit-field extract and mix of int32 words ((x >> 3) & 15) ^ y (hashing, packed flags)",
       [I32("PN", gen="int", lo=-(1 << 30), hi=1 << 30), I32("PN", gen="int", lo=0, hi=1 << 20)], 1)
def bitfield_xor(xp, x, y):
    return ((x >> 3) & 15) ^ y


@probe("int", "int64 floor division and modulo by 7 with negative operands (bucketing of signed ids)",
       [I64("PN", gen="int", lo=-(1 << 40), hi=1 << 40)], 1)
def floordiv_mod_i64(xp, x):
    return x // 7 + x % 7


@probe("dtype", "float16 activations times float32 weights plus bias (mixed precision epilogue)",
       [F16("PN"), F32("PN"), F32("PN")], 1)
def mixed_f16_f32(xp, h, w, b):
    return xp.astype(h, xp.float32) * w + b


@probe("science", "degree-6 polynomial in float64 by Horner's rule (numpy.polyval of a fitted curve)",
       [F64("PN", gen="uniform", lo=-2.0, hi=2.0)], 1)
def polyval6_f64(xp, x):
    return ((((((0.5 * x - 1.25) * x + 2.0) * x - 0.75) * x + 0.125) * x - 3.0) * x + 1.5)


@probe("where", "gradient clipping by value with sign: where(|g| > 1, sign-like +-1, g) (torch clip_grad_value_)",
       [F32("PN")], 1)
def clip_grad_value(xp, g):
    return xp.where(g > 1.0, 1.0, xp.where(g < -1.0, -1.0, g))


@probe("power", "signed square root, x * |x| ** -0.5 (power-normalized features, Perronnin et al. 2010)",
       [F32("PN", gen="uniform", lo=0.5, hi=4.0)], 1)
def power_norm(xp, x):
    return x * xp.abs(x) ** -0.5


# ---- batch 2: scans, gathers, stencils, permutes, integer and bool reductions ---------------------------
@probe("scan", "running total along rows (numpy.cumsum(axis=-1): cumulative returns, CDFs)", [F32("PR", "PC")], 1)
def cumsum_rows(xp, x):
    return xp.cumsum(x, axis=-1)


@probe("gather", "embedding lookup scaled by sqrt(d) (nn.Embedding of a transformer's input, Vaswani et al.)",
       [F32("PE", "PLD"), I64("PG", gen="int", lo=0, hi="PE")], 1)
def embedding_gather(xp, table, idx):
    return table[idx[: idx.shape[0] // 64]] * 27.712812921102035


@probe("strided", "attention heads merged back: (batch, heads, tokens, dim) -> (batch, tokens, heads, dim) "
       "plus a residual (transpose(0, 2, 1, 3) of multi-head attention)",
       [F32("PB4", "PH4", "PT4", "PD4"), F32("PB4", "PT4", "PH4", "PD4")], 1)
def merge_heads_residual(xp, o, r):
    return xp.transpose(o, (0, 2, 1, 3)) + r


@probe("stencil", "5-point Laplacian of a 2-d grid (heat equation step; numba / JAX stencil examples)",
       [F32("PS", "PS")], 1)
def laplacian_2d(xp, u):
    return u[1:-1, 2:] + u[1:-1, :-2] + u[2:, 1:-1] + u[:-2, 1:-1] - 4.0 * u[1:-1, 1:-1]


@probe("stencil", "finite differences along rows, numpy.diff(x, axis=-1) (velocities from positions)",
       [F32("PR", "PC")], 1)
def diff_rows(xp, x):
    return x[:, 1:] - x[:, :-1]


@probe("reduce", "int8 row sums into int64 (NumPy's sum of int8: quantized activation totals)",
       [In(("PR", "PC"), "int8", gen="int", lo=-128, hi=128)], 1)
def sum_rows_int8(xp, q):
    return xp.sum(q, axis=-1)


@probe("reduce", "all positive per column, numpy.all(x > 0, axis=0) (feature validity masks)",
       [F32("PR", "PC", gen="uniform", lo=-0.001, hi=1.0)], 1)
def all_positive_cols(xp, x):
    return xp.all(x > 0.0, axis=0)


@probe("broadcast", "rank of each a_i among b: sum(a[:, None] > b[None, :], axis=1) (a broadcast compare "
       "reduced: numpy.searchsorted's count form)", [F32("PV"), F32("PV")], 1, memory_bound=False)
def rank_count(xp, a, b):
    return xp.sum(a[:, None] > b[None, :], axis=1)


@probe("where", "rows masked by a per-row flag: where(mask[:, None], x, 0) (padding masks of sequences)",
       [F32("PR", "PC"), In(("PR",), "bool", gen="bernoulli")], 1)
def mask_rows(xp, x, m):
    return xp.where(m[:, None], x, 0.0)


@probe("norm", "clip each row's L2 norm to 1: x * minimum(1, 1 / ||x||) (max-norm constraint, DP-SGD "
       "per-example clipping)", [F32("PR", "PC")], 1, ideal_why=ROWNORM)
def clip_row_norm(xp, x):
    n = xp.sqrt(xp.sum(x * x, axis=-1, keepdims=True))
    return x * xp.minimum(1.0, 1.0 / (n + 1e-6))


BY_NAME = {w.name: w for w in WORKLOADS}
assert len(BY_NAME) == len(WORKLOADS), "duplicate probe names"
assert not set(BY_NAME) & set(W.BY_NAME), "a probe shares a name with a suite workload"
