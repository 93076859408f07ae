"""workloads.py: the suite's one declarative table of array workloads taken from real programs.

Each workload is a function of a namespace `xp` and its input arrays, written ONCE in NumPy syntax;
every library runs that same function (libs.py gives each one its `xp`). Rules that keep the code
portable across numpy, loom, cupy, jax.numpy, torch (through a thin adapter), numexpr (through a
tracer) and Numba (njit over the function's source):
  - functions, not methods: `xp.sum(x, axis=-1, keepdims=True)`, `xp.astype(x, xp.float32)`;
  - operators, `[:, None]`, basic slices with positive steps and `.T` on 2-d arrays are fine;
  - constants are Python scalars (NEP 50 weak scalars in NumPy 2).

Shapes are written with dimension names; DIMS gives their values per size class: "cpu" (tens of
MB per workload, for the 2-core CI box), "h200" (hundreds of MB, fills the GPU), "test" (tiny, for
the schedule test). `ideal` is the number of kernels a fusing compiler SHOULD need on the host
(one pass over memory per independent reduction phase); tests/python/test_suite_schedule.py asserts
it. Sources say where each expression comes from.
"""
import dataclasses
from typing import Callable, Optional

# ---- sizes ------------------------------------------------------------------------------------------
DIMS = {
    "cpu": dict(N=1 << 22, R=4096, C=1024, S=2048, NB=8, CH=64, H=64, W=128, B3=16, M3=256, L3=1024,
                BH=16, T=512, SR=10**6, SC=16, LR=16, LC=10**6, QB=1 << 18, BN=1 << 16, BC=64),
    "h200": dict(N=1 << 26, R=16384, C=4096, S=8192, NB=32, CH=256, H=64, W=128, B3=64, M3=1024,
                 L3=1024, BH=64, T=1024, SR=10**6, SC=16, LR=16, LC=10**7, QB=1 << 22, BN=1 << 20, BC=64),
    "test": dict(N=1002, R=37, C=64, S=48, NB=2, CH=3, H=4, W=6, B3=2, M3=5, L3=7, BH=2, T=8, SR=100,
                 SC=16, LR=4, LC=1000, QB=64, BN=100, BC=8),
}
for _d in DIMS.values():
    _d["C2"] = _d["C"] // 2


@dataclasses.dataclass
class In:
    """One input: shape (dimension names or ints), dtype, generator: 'normal', 'uniform' (lo, hi),
    'int' (lo, hi; hi may name a dimension), 'bernoulli', 'causal_mask', 'normal_nan' (about 5 % NaN); a complex
    dtype with 'normal' draws both parts."""
    shape: tuple
    dtype: str = "float32"
    gen: str = "normal"
    lo: float = 0.0
    hi: object = 1.0


@dataclasses.dataclass
class Workload:
    name: str
    group: str
    source: str
    fn: Callable
    inputs: list
    ideal: int                       # kernels a fusing compiler should need (host)
    ideal_why: str = ""
    native: dict = dataclasses.field(default_factory=dict)   # lib -> fn(module, *arrays)
    tol: Optional[float] = None      # normwise tolerance override (floats)
    int_tol: int = 0                 # allowed |difference| of integer outputs
    upcast_ref: bool = True          # reference: float inputs in float64
    memory_bound: bool = True

    def shapes(self, size):
        d = DIMS[size]
        return [tuple(d[s] if isinstance(s, str) else s for s in i.shape) for i in self.inputs]


WORKLOADS = []


def registrar(table):
    """A decorator that appends a workload to `table` (this file's `wl`; the unseen tables' own)."""
    def register(group, source, inputs, ideal, name=None, **kw):
        def reg(fn):
            table.append(Workload(name or fn.__name__, group, source, fn, inputs, ideal, **kw))
            return fn
        return reg
    return register


wl = registrar(WORKLOADS)


def add_dims(table_dims):
    """Another table's dim names and sizes per machine size into DIMS (a name two tables share keeps one size)."""
    for size, dims in table_dims.items():
        for k, v in dims.items():
            assert k not in DIMS[size] or DIMS[size][k] == v, k
            DIMS[size][k] = v


def variant(fn, name, group, source, inputs, ideal, **kw):
    WORKLOADS.append(Workload(name, group, source, fn, inputs, ideal, **kw))


F32 = lambda *shape, **kw: In(shape, "float32", **kw)  # noqa: E731
F64 = lambda *shape, **kw: In(shape, "float64", **kw)  # noqa: E731
F16 = lambda *shape, **kw: In(shape, "float16", **kw)  # noqa: E731
I32 = lambda *shape, **kw: In(shape, "int32", **kw)  # noqa: E731
I64 = lambda *shape, **kw: In(shape, "int64", **kw)  # noqa: E731
ROWNORM = "one row kernel: its phases (max, sum, ...) read the row, the last one writes it"


def _torch_rms_norm(t, x, w):
    return t.nn.functional.rms_norm(x, (x.shape[-1],), w, 1e-6)


# ---- activations --------------------------------------------------------------------------------------
@wl("activation", "GPT-2 gelu (openai/gpt-2 src/model.py); HF NewGELUActivation: the tanh form",
    [F32("N")], 1, native={"torch": lambda t, x: t.nn.functional.gelu(x, approximate="tanh")})
def gelu_tanh(xp, x):
    return 0.5 * x * (1.0 + xp.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


@wl("activation", "BERT gelu, erf form (google-research/bert modeling.py); torch F.gelu default",
    [F32("N")], 1, native={"torch": lambda t, x: t.nn.functional.gelu(x)})
def gelu_erf(xp, x):
    return 0.5 * x * (1.0 + xp.erf(x * 0.7071067811865476))


@wl("activation", "SiLU/Swish (Ramachandran et al. 2017); LLaMA MLP activation, torch F.silu",
    [F32("N")], 1, native={"torch": lambda t, x: t.nn.functional.silu(x)})
def silu(xp, x):
    return x / (1.0 + xp.exp(-x))


@wl("activation", "SwiGLU of the LLaMA FeedForward: silu(x W1) * (x W3) on the two GEMM outputs",
    [F32("R", "C"), F32("R", "C")], 1, native={"torch": lambda t, g, u: t.nn.functional.silu(g) * u})
def swiglu(xp, g, u):
    return g / (1.0 + xp.exp(-g)) * u


@wl("activation", "Mish (Misra 2019), YOLOv4 backbone; torch F.mish", [F32("N")], 1,
    native={"torch": lambda t, x: t.nn.functional.mish(x)})
def mish(xp, x):
    return x * xp.tanh(xp.log1p(xp.exp(x)))


@wl("activation", "inverted dropout applied with pre-drawn uniforms (torch F.dropout, p=0.1)",
    [F32("N"), F32("N", gen="uniform")], 1)
def dropout_apply(xp, x, u):
    return xp.where(u >= 0.1, x * (1.0 / 0.9), 0.0)


# ---- broadcasts ---------------------------------------------------------------------------------------
@wl("broadcast", "nn.Linear bias add: activations (tokens, features) + bias (features,)",
    [F32("R", "C"), F32("C")], 1)
def bias_add_rows(xp, x, b):
    return x + b


@wl("broadcast", "per-token (row) scale: dynamic per-token dequantisation (SmoothQuant, LLM.int8)",
    [F32("R", "C"), F32("R")], 1)
def scale_rows(xp, x, s):
    return x * s[:, None]


@wl("broadcast", "Conv1d bias in (batch, channels, length) layout, e.g. WaveNet: middle axis of 3-d",
    [F32("B3", "M3", "L3"), F32("M3")], 1)
def bias_mid_3d(xp, x, b):
    return x + b[:, None]


@wl("broadcast", "BatchNorm2d inference on NCHW (torch F.batch_norm, training=False): channel axis 1 of 4-d",
    [F32("NB", "CH", "H", "W"), F32("CH"), F32("CH", gen="uniform", lo=0.5, hi=2.0), F32("CH"), F32("CH")], 1,
    native={"torch": lambda t, x, mu, var, w, b: t.nn.functional.batch_norm(x, mu, var, w, b, False, 0.0, 1e-5)})
def batchnorm_infer_nchw(xp, x, mu, var, w, b):
    return (x - mu[:, None, None]) / xp.sqrt(var[:, None, None] + 1e-5) * w[:, None, None] + b[:, None, None]


@wl("broadcast", "Gaussian (RBF) kernel matrix of 1-d points, exp(-(a_i - b_j)^2) (issue 11's example)",
    [F32("S"), F32("S")], 1)
def outer_gauss(xp, a, b):
    return xp.exp(-(a[:, None] - b[None, :]) ** 2)


@wl("broadcast", "outer sum a_i + b_j (numpy.add.outer), the ||a||^2 + ||b||^2 term of distances",
    [F32("S"), F32("S")], 1)
def outer_add(xp, a, b):
    return a[:, None] + b[None, :]


@wl("broadcast", "sklearn euclidean_distances epilogue: max(||x||^2 - 2 x.y + ||y||^2, 0) after the GEMM",
    [F32("S", gen="uniform", lo=1.0, hi=2.0), F32("S", gen="uniform", lo=1.0, hi=2.0),
     F32("S", "S", gen="uniform")], 1)
def sqdist_epilogue(xp, xx, yy, xy):
    return xp.maximum(xx[:, None] - 2.0 * xy + yy[None, :], 0.0)


@wl("broadcast", "attention probabilities: softmax(scores * d^-0.5 + causal mask) over keys, the "
    "(T, T) mask broadcast over batch*heads (GPT-2 / BERT attention)",
    [F32("BH", "T", "T"), F32("T", "T", gen="causal_mask")], 1, ideal_why=ROWNORM,
    native={"torch": lambda t, s, m: t.softmax(s * 0.125 + m, dim=-1)})
def attn_mask_softmax(xp, s, mask):
    z = s * 0.125 + mask
    e = xp.exp(z - xp.max(z, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


# ---- transposed and strided inputs --------------------------------------------------------------------
@wl("strided", "symmetrise a matrix, (A + A^T) / 2 (sklearn spectral embedding, covariance clean-up)",
    [F32("S", "S")], 1)
def symmetrize(xp, x):
    return 0.5 * (x + x.T)


@wl("strided", "x.T + y (issue 11): a transposed operand beside a contiguous one", [F32("S", "S"), F32("S", "S")], 1)
def transpose_add(xp, x, y):
    return x.T + y


@wl("strided", "interleaved stereo audio to mid/side: L = x[0::2], R = x[1::2] (stride-2 reads, 2 outputs)",
    [F32("N")], 1)
def stereo_mid_side(xp, x):
    left, right = x[0::2], x[1::2]
    return 0.5 * (left + right), 0.5 * (left - right)


@wl("strided", "rotary embedding, interleaved pairs (GPT-J rotate_every_two): x[:, ::2], x[:, 1::2]",
    [F32("R", "C"), F32("R", "C2"), F32("R", "C2")], 1)
def rope_interleaved(xp, x, cos, sin):
    x1, x2 = x[:, 0::2], x[:, 1::2]
    return x1 * cos - x2 * sin, x1 * sin + x2 * cos


@wl("strided", "2x2 average pooling of an image from four strided views (skimage downscale_local_mean)",
    [F32("S", "S")], 1)
def avgpool2x2(xp, x):
    return 0.25 * (x[0::2, 0::2] + x[1::2, 0::2] + x[0::2, 1::2] + x[1::2, 1::2])


# ---- reductions ---------------------------------------------------------------------------------------
@wl("reduce", "np.sum of a vector (a loss or a histogram total)", [F32("N", gen="uniform")], 1)
def sum_all(xp, x):
    return xp.sum(x)


@wl("reduce", "row sums, x.sum(-1) (per-sample totals)", [F32("R", "C", gen="uniform")], 1)
def sum_rows(xp, x):
    return xp.sum(x, axis=-1)


@wl("reduce", "column sums: the bias gradient of nn.Linear, dY.sum(0)", [F32("R", "C", gen="uniform")], 1)
def sum_cols(xp, x):
    return xp.sum(x, axis=0)


@wl("reduce", "((x * y) ** 2).sum(axis=0) (issue 11): column reduction with a prologue and a square",
    [F32("R", "C"), F32("R", "C")], 1)
def sumsq_cols(xp, x, y):
    return xp.sum((x * y) ** 2, axis=0)


@wl("reduce", "mean pooling over tokens (sentence-transformers): mean over the middle axis of (B, T, D)",
    [F32("B3", "M3", "L3")], 1)
def mean_mid(xp, x):
    return xp.mean(x, axis=1)


@wl("reduce", "global average pooling of NCHW (ResNet adaptive_avg_pool2d(1)): two trailing axes",
    [F32("NB", "CH", "H", "W")], 1,
    native={"torch": lambda t, x: t.nn.functional.adaptive_avg_pool2d(x, 1)[:, :, 0, 0]})
def global_avgpool(xp, x):
    return xp.mean(x, axis=(2, 3))


@wl("reduce", "BatchNorm2d training statistics over (N, H, W) with keepdims, two-pass variance",
    [F32("NB", "CH", "H", "W")], 1, ideal_why="mean and variance of each channel in one multi-phase kernel",
    native={"torch": lambda t, x: tuple(reversed(t.var_mean(x, dim=(0, 2, 3), correction=0, keepdim=True)))})
def bn2d_stats(xp, x):
    mu = xp.mean(x, axis=(0, 2, 3), keepdims=True)
    return mu, xp.mean((x - mu) ** 2, axis=(0, 2, 3), keepdims=True)


@wl("reduce", "per-tensor absmax, the int8 quantisation scale (LLM.int8, torch.ao MinMax observers)",
    [F32("N")], 1)
def absmax_all(xp, x):
    return xp.max(xp.abs(x))


@wl("reduce", "mean squared error (torch F.mse_loss)", [F32("N"), F32("N")], 1,
    native={"torch": lambda t, a, b: t.nn.functional.mse_loss(a, b)})
def mse_loss(xp, a, b):
    return xp.mean((a - b) ** 2)


@wl("reduce", "binary cross-entropy with logits, TF sigmoid_cross_entropy_with_logits' stable formula",
    [F32("N"), F32("N", gen="bernoulli")], 1,
    native={"torch": lambda t, z, y: t.nn.functional.binary_cross_entropy_with_logits(z, y)})
def bce_logits(xp, z, y):
    return xp.mean(xp.maximum(z, 0.0) - z * y + xp.log1p(xp.exp(-xp.abs(z))))


@wl("reduce", "np.var of a float64 sample (scientific statistics)", [F64("N")], 1,
    ideal_why="mean then squared deviations: one multi-phase kernel")
def var_all_f64(xp, x):
    return xp.var(x)


@wl("reduce", "per-series standard deviation, z-normalisation of time series (tslearn)", [F32("R", "C")], 1,
    ideal_why=ROWNORM)
def std_rows(xp, x):
    return xp.std(x, axis=-1)


@wl("reduce", "BatchNorm1d training statistics: mean and variance over axis 0 of (batch, features)",
    [F32("BN", "BC")], 1, ideal_why="column mean and variance in one multi-phase kernel",
    native={"torch": lambda t, x: tuple(reversed(t.var_mean(x, dim=0, correction=0)))})
def bn1d_stats(xp, x):
    return xp.mean(x, axis=0), xp.var(x, axis=0)


@wl("reduce", "count of values in a band, np.count_nonzero((x > lo) & (x < hi)): comparisons into a sum",
    [F32("N")], 1)
def count_in_range(xp, x):
    return xp.sum((x > -1.0) & (x < 1.0))


# ---- row normalisations -------------------------------------------------------------------------------
@wl("norm", "row L2 normalisation (torch F.normalize; CLIP embeddings)", [F32("R", "C")], 1, ideal_why=ROWNORM,
    native={"torch": lambda t, x: t.nn.functional.normalize(x, dim=-1)})
def l2normalize_rows(xp, x):
    return x / xp.maximum(xp.sqrt(xp.sum(x * x, axis=-1, keepdims=True)), 1e-12)


@wl("norm", "row cosine similarity (torch F.cosine_similarity): three row reductions of two inputs",
    [F32("R", "C"), F32("R", "C")], 1,
    native={"torch": lambda t, a, b: t.nn.functional.cosine_similarity(a, b, dim=-1)})
def cosine_sim_rows(xp, a, b):
    return xp.sum(a * b, axis=-1) / (xp.sqrt(xp.sum(a * a, axis=-1)) * xp.sqrt(xp.sum(b * b, axis=-1)))


@wl("norm", "softmax over the last axis (torch.softmax; attention, classifier heads)", [F32("R", "C")], 1,
    ideal_why=ROWNORM, native={"torch": lambda t, x: t.softmax(x, dim=-1)})
def softmax_rows(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


@wl("norm", "log_softmax over the last axis (torch F.log_softmax; language-model heads)", [F32("R", "C")], 1,
    ideal_why=ROWNORM, native={"torch": lambda t, x: t.nn.functional.log_softmax(x, dim=-1)})
def log_softmax_rows(xp, x):
    z = x - xp.max(x, axis=-1, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=-1, keepdims=True))


@wl("norm", "cross-entropy of logits and integer labels, one-hot by comparison (jax.nn.one_hot + "
    "optax.softmax_cross_entropy; torch F.cross_entropy)", [F32("R", "C"), In(("R",), "int64", "int", 0, "C")], 2,
    ideal_why="a row kernel (log-softmax, pick the label) then the mean over rows",
    native={"torch": lambda t, x, y: t.nn.functional.cross_entropy(x, y)})
def cross_entropy(xp, x, labels):
    z = x - xp.max(x, axis=-1, keepdims=True)
    logp = z - xp.log(xp.sum(xp.exp(z), axis=-1, keepdims=True))
    onehot = labels[:, None] == xp.arange(x.shape[-1])
    return -xp.mean(xp.sum(xp.where(onehot, logp, 0.0), axis=-1))


@wl("norm", "LayerNorm written as in issue 11, ((x - mu) ** 2).mean(-1, keepdims=True) (torch F.layer_norm)",
    [F32("R", "C"), F32("C"), F32("C")], 1, ideal_why=ROWNORM,
    native={"torch": lambda t, x, w, b: t.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)})
def layernorm(xp, x, w, b):
    mu = xp.mean(x, axis=-1, keepdims=True)
    var = xp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / xp.sqrt(var + 1e-5) * w + b


@wl("norm", "RMSNorm of LLaMA (x * rsqrt(mean(x**2) + eps) * w; torch F.rms_norm)", [F32("R", "C"), F32("C")], 1,
    ideal_why=ROWNORM, native={"torch": _torch_rms_norm})
def rmsnorm(xp, x, w):
    return x / xp.sqrt(xp.mean(x ** 2, axis=-1, keepdims=True) + 1e-6) * w


# ---- arg-reductions -----------------------------------------------------------------------------------
@wl("arg", "classifier predictions, logits.argmax(-1) (accuracy metrics)", [F32("R", "C")], 1)
def argmax_rows(xp, x):
    return xp.argmax(x, axis=-1)


@wl("arg", "peak of a spectrum, np.argmax of a long vector (issue 11: 2^28 on the GPU)", [F32("N")], 1)
def argmax_all(xp, x):
    return xp.argmax(x)


@wl("arg", "k-means assignment: argmin over 16 centroid distances per point (sklearn KMeans; many short rows)",
    [F32("SR", "SC")], 1)
def kmeans_argmin(xp, d):
    return xp.argmin(d, axis=1)


@wl("arg", "best cell of a cost grid, np.argmin over all of a 2-d array (then np.unravel_index)",
    [F32("R", "C")], 1)
def argmin_all_2d(xp, x):
    return xp.argmin(x)


# ---- extreme shapes -----------------------------------------------------------------------------------
variant(softmax_rows, "router_softmax_short", "shape",
        "MoE router: softmax over 16 experts for 10^6 tokens (Mixtral / DeepSeek-MoE gates; many short rows)",
        [F32("SR", "SC")], 1, ideal_why=ROWNORM, native={"torch": lambda t, x: t.softmax(x, dim=-1)})


@wl("shape", "per-channel RMS level of multichannel audio, 16 channels x 10^7 samples (few long rows)",
    [F32("LR", "LC")], 1)
def channel_rms_long(xp, x):
    return xp.sqrt(xp.mean(x ** 2, axis=1))


# ---- tiny arrays (launch and host overhead) -----------------------------------------------------------
variant(gelu_tanh, "tiny_gelu", "tiny", "GPT-2 gelu on 4096 values (a small MLP layer at batch 1)",
        [F32(4096)], 1, native={"torch": lambda t, x: t.nn.functional.gelu(x, approximate="tanh")},
        memory_bound=False)
variant(softmax_rows, "tiny_softmax", "tiny", "softmax of 8 x 512 logits (decoding one token, 8 heads)",
        [F32(8, 512)], 1, ideal_why=ROWNORM, native={"torch": lambda t, x: t.softmax(x, dim=-1)},
        memory_bound=False)


# ---- optimizers (several outputs) ---------------------------------------------------------------------
@wl("optimizer", "Adam step (Kingma & Ba 2015; torch.optim.Adam single-tensor): 4 inputs, 3 outputs",
    [F32("N"), F32("N"), F32("N"), F32("N", gen="uniform", lo=0.0, hi=0.01)], 1)
def adam(xp, p, g, m, v):
    b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
    bc1, bc2 = 1.0 - b1 ** 10, 1.0 - b2 ** 10
    m2 = b1 * m + (1.0 - b1) * g
    v2 = b2 * v + (1.0 - b2) * g * g
    return p - lr * (m2 / bc1) / (xp.sqrt(v2 / bc2) + eps), m2, v2


variant(adam, "tiny_adam", "tiny", "Adam step on a 1000-element bias vector", [F32(1000)] * 3 +
        [F32(1000, gen="uniform", lo=0.0, hi=0.01)], 1, memory_bound=False)


@wl("optimizer", "RMSprop step (torch.optim.RMSprop, Hinton's lecture 6e): g ** 2 and v ** 0.5",
    [F32("N"), F32("N"), F32("N", gen="uniform", lo=0.0, hi=0.01)], 1)
def rmsprop(xp, p, g, v):
    v2 = 0.99 * v + 0.01 * g ** 2
    return p - 0.01 * g / (v2 ** 0.5 + 1e-8), v2


# ---- float16 and mixed dtypes -------------------------------------------------------------------------
variant(gelu_tanh, "gelu_f16", "dtype", "GPT-2 gelu in float16 (half-precision inference)", [F16("N")], 1,
        native={"torch": lambda t, x: t.nn.functional.gelu(x, approximate="tanh")})
variant(softmax_rows, "softmax_f16", "dtype", "softmax of float16 logits (half-precision attention)",
        [F16("R", "C")], 1, ideal_why=ROWNORM, native={"torch": lambda t, x: t.softmax(x, dim=-1)})


@wl("dtype", "float32 residual stream plus a float16 block output (residual_in_fp32 of Mamba / flash-attn "
    "fused add-norm): float32 + float16 -> float32", [F32("R", "C"), F16("R", "C")], 1)
def residual_mixed(xp, r, h):
    return r + h


@wl("dtype", "fp16 gradients to fp32 master gradients with the loss scale removed, plus the overflow flag "
    "(apex amp master weights; torch GradScaler.unscale_)", [F16("N")], 1,
    ideal_why="the cast and the any() reduction in one kernel with two outputs")
def amp_unscale(xp, g):
    g32 = xp.astype(g, xp.float32) * (1.0 / 1024.0)
    return g32, xp.any(~xp.isfinite(g32))


# ---- integers -----------------------------------------------------------------------------------------
@wl("int", "int8 per-channel dequantisation (ONNX DequantizeLinear per axis: (q - zero_point) * scale)",
    [In(("R", "C"), "int8", "int", -128, 128), F32("C", gen="uniform", lo=0.01, hi=0.1)], 1)
def int8_dequant(xp, q, s):
    return (xp.astype(q, xp.float32) - 3.0) * s


@wl("int", "int8 quantisation (ONNX QuantizeLinear; torch.quantize_per_tensor): clip(rint(x / s)) to int8",
    [F32("R", "C")], 1, upcast_ref=False, int_tol=1)
def int8_quantize(xp, x):
    return xp.astype(xp.clip(xp.rint(x / 0.02), -128, 127), xp.int8)


@wl("int", "llama.cpp Q4_0 dequantisation: low and high nibbles (q & 15, q >> 4) minus 8, times the block scale",
    [In(("QB", 16), "uint8", "int", 0, 256), F32("QB", 1, gen="uniform", lo=0.01, hi=0.1)], 1)
def int4_dequant(xp, q, d):
    return (xp.astype(q & 15, xp.float32) - 8.0) * d, (xp.astype(q >> 4, xp.float32) - 8.0) * d


@wl("int", "np.unravel_index of flat indices into rows of 1000: floor_divide and remainder, 2 outputs",
    [In(("N",), "int64", "int", 0, 10**9)], 1)
def unravel_index(xp, i):
    return i // 1000, i % 1000


@wl("int", "feature hashing of int ids: a 32-bit integer mix (xor, shifts, multiply, mask; T. Mueller's "
    "hash) then modulo 2^20 buckets (sklearn FeatureHasher's idea)", [In(("N",), "int64", "int", 0, 2**32)], 1)
def feature_hash(xp, x):
    x = ((x >> 16) ^ x) * 0x45D9F3B & 0xFFFFFFFF
    x = ((x >> 16) ^ x) * 0x45D9F3B & 0xFFFFFFFF
    return ((x >> 16) ^ x) % 1048576


# ---- where / clip / comparisons -----------------------------------------------------------------------
@wl("where", "Huber / smooth-L1 loss per element (Fast R-CNN; torch F.smooth_l1_loss, reduction='none')",
    [F32("N"), F32("N")], 1, native={"torch": lambda t, a, b: t.nn.functional.smooth_l1_loss(a, b, reduction="none")})
def huber(xp, a, b):
    d = a - b
    ad = xp.abs(d)
    return xp.where(ad < 1.0, 0.5 * d * d, ad - 0.5)


@wl("where", "PPO clipped surrogate objective (Schulman et al. 2017; CleanRL ppo.py): exp, clip, minimum, mean",
    [F32("N", gen="uniform", lo=-1.0, hi=0.0), F32("N", gen="uniform", lo=-1.0, hi=0.0), F32("N")], 1)
def ppo_clip(xp, logp, logp_old, adv):
    r = xp.exp(logp - logp_old)
    return -xp.mean(xp.minimum(r * adv, xp.clip(r, 0.8, 1.2) * adv))


# ---- powers -------------------------------------------------------------------------------------------
@wl("power", "Perlin's fade curve 6t^5 - 15t^4 + 10t^3 (Perlin, 'Improving Noise', 2002)",
    [F32("N", gen="uniform")], 1)
def perlin_fade(xp, t):
    return 6.0 * t ** 5 - 15.0 * t ** 4 + 10.0 * t ** 3


@wl("power", "gradient magnitude (gx**2 + gy**2) ** 0.5 of Sobel filter outputs (skimage.filters.sobel)",
    [F32("S", "S"), F32("S", "S")], 1)
def grad_magnitude(xp, gx, gy):
    return (gx ** 2 + gy ** 2) ** 0.5


# ---- scientific float64 -------------------------------------------------------------------------------
@wl("science", "Black-Scholes call and put with the polynomial normal CDF (Numba's and CUDA samples' "
    "BlackScholes), float64, 3 inputs 2 outputs",
    [F64("N", gen="uniform", lo=5.0, hi=30.0), F64("N", gen="uniform", lo=1.0, hi=100.0),
     F64("N", gen="uniform", lo=0.25, hi=10.0)], 1, memory_bound=False)
def black_scholes(xp, s, x, t):
    def cnd(d):
        k = 1.0 / (1.0 + 0.2316419 * xp.abs(d))
        poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))
        ret = 0.3989422804014327 * xp.exp(-0.5 * d * d) * poly
        return xp.where(d > 0, 1.0 - ret, ret)
    r, v = 0.02, 0.30
    sqrt_t = xp.sqrt(t)
    d1 = (xp.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    c1, c2 = cnd(d1), cnd(d2)
    ert = xp.exp(-r * t)
    return s * c1 - x * ert * c2, x * ert * (1.0 - c2) - s * (1.0 - c1)


@wl("science", "haversine great-circle distance in km (sklearn haversine_distances' formula), float64",
    [F64("N", gen="uniform", lo=-1.5, hi=1.5), F64("N", gen="uniform", lo=-3.1, hi=3.1),
     F64("N", gen="uniform", lo=-1.5, hi=1.5), F64("N", gen="uniform", lo=-3.1, hi=3.1)], 1, memory_bound=False)
def haversine(xp, lat1, lon1, lat2, lon2):
    a = xp.sin((lat2 - lat1) * 0.5) ** 2 + xp.cos(lat1) * xp.cos(lat2) * xp.sin((lon2 - lon1) * 0.5) ** 2
    return 12742.0 * xp.arcsin(xp.sqrt(a))


BY_NAME = {w.name: w for w in WORKLOADS}
assert len(BY_NAME) == len(WORKLOADS), "duplicate workload names"


def table(name="suite"):
    """The workloads of a table: "suite" (this file, the one the compiler is tuned on), "probe"
    (workloads_probe.py: unseen expressions and shapes, the check that a mechanism is general) or "fresh"
    (workloads_fresh.py: a later set of unseen workloads and shapes, in neither of the other two) or "fresh2"
    (workloads_fresh2.py: a fourth set, in none of the other three)."""
    if name == "suite":
        return WORKLOADS
    if name == "probe":
        from . import workloads_probe
        return workloads_probe.WORKLOADS
    if name == "fresh":
        from . import workloads_fresh
        return workloads_fresh.WORKLOADS
    if name == "fresh2":
        from . import workloads_fresh2
        return workloads_fresh2.WORKLOADS
    raise ValueError(f"unknown workload table {name!r}: use 'suite', 'probe', 'fresh' or 'fresh2'")


def lookup(name):
    """A workload of any table by its name."""
    if name in BY_NAME:
        return BY_NAME[name]
    from . import workloads_fresh, workloads_fresh2, workloads_probe
    for t in (workloads_probe, workloads_fresh, workloads_fresh2):
        if name in t.BY_NAME:
            return t.BY_NAME[name]
    raise KeyError(f"no workload {name!r} in bench/suite/workloads.py, workloads_probe.py, workloads_fresh.py or "
                   "workloads_fresh2.py")