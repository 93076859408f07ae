"""workloads_fresh.py: a third table of workloads, fresh ones that neither the suite nor the probe has seen.

The suite (workloads.py) is what the compiler is tuned on; the probe (workloads_probe.py) was the first check
on unseen workloads, and a probe that a mechanism was tuned on moves into the suite. This table is a second,
later check of the rule that speed must be a property of the compiler: everyday array code of families and
shapes the other two tables miss (float64 and int64 reductions over the first, last and a middle axis, bool
any/all/count along axes, norms that end in a reduction, reductions of transposed and strided views, 4-d
(batch, heads, tokens, dim) reductions, scans down columns and along short rows, products, diff along
axis 0, uint8 image quantisation and blending, float64 expm1/log1p/hypot/arctan2, float16 sigmoid and
tanh, int64 sign/max and int32 clamps, where with scalars and 3-way where chains, int32 x float64
promotion, column normalisation with keepdims, argmin/argmax along axis 0, tall 3-column data, tiny and
~300k-element arrays). Run it with `run.py --table fresh`.

Same rules as workloads.py (functions of `xp`, NumPy syntax, Python scalar constants); the torch adapter
(libs.TorchNS) has every function they call (prod, cumprod, hypot and arctan2 were added for this table: before,
the GPU float64 reference of survival_prod, compound_growth and polar_f64 failed, bench/results/2026-12-07-0033).

workloads.lookup() (run.py --only, diag_pair.py, schedule.py) finds these names as those of the other tables.
"""
from . import workloads as W
from .workloads import F16, F32, F64, I32, I64, In, Workload

_FRESH_DIMS = {
    "cpu": dict(FR=2003, FC=1531, FN=1_500_007, FMID=300_007, FA=24, FM=301, FK=517, FPN=1_000_003,
                FB4=2, FH4=12, FT4=509, FKB=8, FD4=64, FIH=1079, FIW=1917, FKC=17, FKN=300_007,
                FSR=200_003, FSC=12),
    "h200": dict(FR=16_007, FC=6_151, FN=64_000_031, FMID=300_007, FA=64, FM=1031, FK=2053, FPN=50_000_017,
                 FB4=16, FH4=16, FT4=1024, FKB=32, FD4=128, FIH=4320, FIW=7680, FKC=17, FKN=10_000_019,
                 FSR=10_000_019, FSC=12),
    "test": dict(FR=37, FC=29, FN=1001, FMID=515, FA=3, FM=11, FK=13, FPN=101, FB4=2, FH4=3, FT4=5, FKB=2,
                 FD4=4, FIH=9, FIW=14, FKC=5, FKN=103, FSR=41, FSC=12),
}
W.add_dims(_FRESH_DIMS)

WORKLOADS: list[Workload] = []
fresh = W.registrar(WORKLOADS)
B1 = lambda *shape: In(shape, "bool", gen="bernoulli")  # noqa: E731
COLS = "one kernel: its phases (the column reduction, then the map) walk the same band of columns"


# ---- float64 and int64 reductions over the first, last and a middle axis --------------------------------
@fresh("reduce", "column totals of a float64 table (pandas DataFrame.sum(), axis=0)", [F64("FR", "FC")], 1)
def col_totals_f64(xp, x):
    return xp.sum(x, axis=0)


@fresh("reduce", "row totals of an int64 count matrix (pandas DataFrame.sum(axis=1) of integer columns)",
       [I64("FR", "FC", gen="int", lo=0, hi=1 << 40)], 1)
def row_sum_i64(xp, x):
    return xp.sum(x, axis=-1)


@fresh("reduce", "int64 histogram counts summed over time, the middle axis of (station, time, bin) "
       "(xarray Dataset.sum(dim='time'))", [I64("FA", "FM", "FK", gen="int", lo=0, hi=100_000)], 1)
def sum_mid_i64(xp, x):
    return xp.sum(x, axis=1)


@fresh("reduce", "latest int64 nanosecond timestamp per column (pandas DataFrame.max() of datetime64 "
       "columns, as int64)", [I64("FR", "FC", gen="int", lo=0, hi=1 << 60)], 1)
def max_cols_i64(xp, x):
    return xp.max(x, axis=0)


@fresh("reduce", "survival probability, product of (1 - hazard) over time, axis 0 of (time, subject) "
       "(life-table / Kaplan-Meier product), float64",
       [F64("FR", "FC", gen="uniform", lo=0.0, hi=0.002)], 1)
def survival_prod(xp, q):
    return xp.prod(1.0 - q, axis=0)


@fresh("reduce", "centroid of a 3-d point cloud, mean over axis 0 of (points, 3) (Open3D get_center, "
       "Kabsch alignment)", [F32("FPN", 3)], 1)
def point_centroid(xp, p):
    return xp.mean(p, axis=0)


@fresh("reduce", "temporal variance per feature, var over the middle axis of (batch, time, feature) "
       "(variance pooling of audio frames)", [F32("FA", "FM", "FK")], 1,
       ideal_why="mean then squared deviations over the same band: one multi-phase kernel")
def var_mid_3d(xp, x):
    return xp.var(x, axis=1)


# ---- bool reductions ----------------------------------------------------------------------------------
@fresh("reduce", "features present in any sample, any(mask, axis=0) of a bool (samples, features) matrix "
       "(sklearn VarianceThreshold on binary data)", [B1("FR", "FC")], 1)
def any_cols_bool(xp, m):
    return xp.any(m, axis=0)


@fresh("reduce", "rows whose every flag is set, all(mask, axis=-1) (pandas DataFrame.all(axis=1) of a bool "
       "frame)", [B1("FR", "FC")], 1)
def all_rows_bool(xp, m):
    return xp.all(m, axis=-1)


@fresh("reduce", "document frequency: documents containing each term, count_nonzero(X > 0, axis=0) of an "
       "int32 doc-term count matrix (sklearn TfidfTransformer)", [I32("FR", "FC", gen="int", lo=0, hi=3)], 1)
def doc_freq(xp, x):
    return xp.sum(x > 0, axis=0)


# ---- norms ending in a reduction ----------------------------------------------------------------------
@fresh("norm", "L2 norm of each float64 row, sqrt((x*x).sum(-1)) (sklearn.utils.extmath.row_norms)",
       [F64("FR", "FC")], 1)
def row_norms_f64(xp, x):
    return xp.sqrt(xp.sum(x * x, axis=-1))


@fresh("norm", "L2 norm of each column, sqrt((x*x).sum(0)) (column scaling of a least-squares design "
       "matrix, numpy.linalg.norm(X, axis=0))", [F32("FR", "FC")], 1)
def col_norms(xp, x):
    return xp.sqrt(xp.sum(x * x, axis=0))


@fresh("norm", "column-stochastic matrix, x / x.sum(0, keepdims=True) (PageRank / Markov transition "
       "matrix columns)", [F32("FR", "FC", gen="uniform", lo=0.01, hi=1.0)], 1, ideal_why=COLS)
def col_stochastic(xp, x):
    return x / xp.sum(x, axis=0, keepdims=True)


# ---- reductions of transposed and strided views -------------------------------------------------------
@fresh("strided", "row sums of a column-major matrix seen through .T: x.T.sum(1) (Fortran-ordered data "
       "from LAPACK / scipy)", [F32("FC", "FR")], 1)
def transpose_rowsum(xp, x):
    return xp.sum(x.T, axis=1)


@fresh("strided", "per-column mean of the even (left) channels of interleaved frames, x[:, ::2].mean(0)",
       [F32("FR", "FC")], 1)
def strided_col_mean(xp, x):
    return xp.mean(x[:, ::2], axis=0)


# ---- 4-d (batch, heads, tokens, ...) reductions -------------------------------------------------------
@fresh("reduce", "attention probabilities averaged over heads, mean over axis 1 of (batch, heads, tokens, "
       "tokens) (BertViz / attention rollout)", [F32("FB4", "FH4", "FT4", "FT4", gen="uniform")], 1)
def head_mean_attn(xp, p):
    return xp.mean(p, axis=1)


@fresh("reduce", "per-token absmax of the KV cache, max(|k|) over the last axis of (batch, heads, tokens, "
       "dim) (fp8 KV-cache scales, vLLM)", [F32("FKB", "FH4", "FT4", "FD4")], 1)
def kv_absmax_last(xp, k):
    return xp.max(xp.abs(k), axis=-1)


# ---- scans and differences ----------------------------------------------------------------------------
@fresh("scan", "running totals down the columns of a float64 table (pandas DataFrame.cumsum(), axis 0)",
       [F64("FR", "FC")], 1)
def cumsum_cols_f64(xp, x):
    return xp.cumsum(x, axis=0)


@fresh("scan", "compound growth over 12 months of many assets, cumprod(1 + r, axis=-1) of short float64 rows",
       [F64("FSR", "FSC", gen="uniform", lo=-0.05, hi=0.05)], 1)
def compound_growth(xp, r):
    return xp.cumprod(1.0 + r, axis=-1)


@fresh("stencil", "returns of a float64 price table, numpy.diff(x, axis=0) (pandas DataFrame.diff())",
       [F64("FR", "FC")], 1)
def diff_axis0_f64(xp, x):
    return x[1:] - x[:-1]


# ---- images -------------------------------------------------------------------------------------------
@fresh("int", "float image to uint8, clip(rint(x * 255), 0, 255).astype(uint8) (skimage img_as_ubyte of a "
       "filtered image that overshoots [0, 1])", [F32("FIH", "FIW", 3, gen="uniform", lo=-0.1, hi=1.1)], 1,
       upcast_ref=False, int_tol=1)
def quantize_image_u8(xp, x):
    return xp.astype(xp.clip(xp.rint(x * 255.0), 0.0, 255.0), xp.uint8)


@fresh("dtype", "alpha blending of two uint8 HxWx3 images by a float32 HxWx1 matte, fg * a + bg * (1 - a) "
       "(uint8 x float32 promotion; OpenCV / PIL compositing)",
       [In(("FIH", "FIW", 3), "uint8", gen="int", lo=0, hi=256), In(("FIH", "FIW", 3), "uint8", gen="int", lo=0,
        hi=256), F32("FIH", "FIW", 1, gen="uniform")], 1)
def alpha_blend_u8(xp, fg, bg, a):
    return fg * a + bg * (1.0 - a)


# ---- float64 and float16 math -------------------------------------------------------------------------
@fresh("science", "log(1 - exp(-x)) in its accurate two-branch form (Maechler 2012; TFP / JAX log1mexp), "
       "float64", [F64("FN", gen="uniform", lo=0.01, hi=5.0)], 1, memory_bound=False)
def log1mexp_f64(xp, x):
    return xp.where(x < 0.6931471805599453, xp.log(-xp.expm1(-x)), xp.log1p(-xp.exp(-x)))


@fresh("science", "cartesian to polar, hypot(x, y) and arctan2(y, x), float64 (numpy docs; skimage "
       "warp_polar), 2 outputs", [F64("FN"), F64("FN")], 1, memory_bound=False)
def polar_f64(xp, x, y):
    return xp.hypot(x, y), xp.arctan2(y, x)


@fresh("activation", "sigmoid in float16 (LSTM gates / torch.sigmoid in half-precision inference)",
       [F16("FN")], 1, native={"torch": lambda t, x: t.sigmoid(x)})
def sigmoid_f16(xp, x):
    return 1.0 / (1.0 + xp.exp(-x))


@fresh("activation", "tanh soft-capping of float16 logits, 30 * tanh(x / 30) (Gemma 2 logit soft-cap)",
       [F16("FN", gen="uniform", lo=-100.0, hi=100.0)], 1)
def softcap_f16(xp, x):
    return 30.0 * xp.tanh(x * (1.0 / 30.0))


# ---- integers -----------------------------------------------------------------------------------------
@fresh("int", "direction of int64 price changes in ticks, numpy.sign(x) as where(x > 0, 1, where(x < 0, -1, 0))",
       [I64("FN", gen="int", lo=-1000, hi=1000)], 1)
def sign_i64(xp, x):
    return xp.where(x > 0, 1, xp.where(x < 0, -1, 0))


@fresh("int", "saturate int32 accumulated depth to the uint16 range, minimum(maximum(x, 0), 65535) "
       "(depth-image fusion)", [I32("FN", gen="int", lo=-20_000, hi=100_000)], 1)
def clamp_u16_i32(xp, x):
    return xp.minimum(xp.maximum(x, 0), 65535)


@fresh("dtype", "expected counts, int32 exposures times float64 rates (Poisson GLM offsets; int32 x float64 "
       "promotion)", [I32("FN", gen="int", lo=0, hi=10_000), F64("FN", gen="uniform", lo=0.0, hi=0.01)], 1)
def counts_times_rate(xp, c, r):
    return c * r


# ---- where with scalars and chains --------------------------------------------------------------------
@fresh("where", "soft thresholding, the proximal step of the L1 norm (ISTA; pywt.threshold mode='soft'), "
       "float64 where chain with scalars", [F64("FN")], 1)
def soft_threshold_f64(xp, x):
    return xp.where(x > 0.5, x - 0.5, xp.where(x < -0.5, x + 0.5, 0.0))


@fresh("where", "pick one of three proposals by a uniform draw, numpy.select([u < 0.2, u < 0.7], [a, b], c) "
       "(mixture sampling)", [F32("FN", gen="uniform"), F32("FN"), F32("FN"), F32("FN")], 1, upcast_ref=False)
def select3(xp, u, a, b, c):
    return xp.where(u < 0.2, a, xp.where(u < 0.7, b, c))


@fresh("where", "median of three video frames, max(min(a, b), min(max(a, b), c)) (temporal median "
       "denoising)", [F32("FN"), F32("FN"), F32("FN")], 1)
def median3(xp, a, b, c):
    return xp.maximum(xp.minimum(a, b), xp.minimum(xp.maximum(a, b), c))


# ---- arg-reductions along axis 0 ----------------------------------------------------------------------
@fresh("arg", "best class per sample of a class-major (classes, samples) score matrix, argmax(axis=0)",
       [F32("FR", "FC")], 1)
def argmax_cols(xp, x):
    return xp.argmax(x, axis=0)


@fresh("arg", "k-means assignment of points from a (clusters, points) float64 distance matrix, "
       "argmin(axis=0)", [F64("FKC", "FKN", gen="uniform")], 1)
def argmin_cols_f64(xp, d):
    return xp.argmin(d, axis=0)


# ---- tiny and medium sizes ----------------------------------------------------------------------------
@fresh("tiny", "Monte Carlo estimate from 1999 float64 samples, sum(x)", [F64(1999)], 1, memory_bound=False)
def tiny_sum_f64(xp, x):
    return xp.sum(x)


@fresh("tiny", "greedy pick among 1000 ImageNet logits, argmax(x)", [F32(1000)], 1, memory_bound=False)
def tiny_argmax(xp, x):
    return xp.argmax(x)


@fresh("tiny", "per-column mean of a 31 x 61 float32 block (a mini-batch of features)", [F32(31, 61)], 1,
       memory_bound=False)
def tiny_col_mean(xp, x):
    return xp.mean(x, axis=0)


@fresh("reduce", "energy of a 300007-sample audio clip (about 7 s at 44.1 kHz), sum(x * x)", [F32("FMID")], 1)
def mid_energy(xp, x):
    return xp.sum(x * x)


@fresh("activation", "logit of 300007 probabilities, log(p / (1 - p)) (scipy.special.logit)",
       [F32("FMID", gen="uniform", lo=0.01, hi=0.99)], 1)
def mid_logit(xp, p):
    return xp.log(p / (1.0 - p))


BY_NAME = {w.name: w for w in WORKLOADS}
assert len(BY_NAME) == len(WORKLOADS), "duplicate fresh names"
assert not set(BY_NAME) & set(W.BY_NAME), "a fresh workload shares a name with a suite workload"

from . import workloads_probe as _P  # noqa: E402
assert not set(BY_NAME) & set(_P.BY_NAME), "a fresh workload shares a name with a probe"
