"""workloads_fresh2.py: a fourth table of workloads ("fresh2"), everyday array code that none of the suite
(workloads.py), the probe (workloads_probe.py) or the fresh table (workloads_fresh.py) has, by name or by the
shape of its expression.

Families the other three miss: reductions with keepdims over two trailing axes of 4-d feeding the normalize
(instance norm), logsumexp / min-max scaling / NaN-skipping means down the columns, weighted row means, a
reduction over a length-3 axis after a 3-d broadcast (pairwise distances), row quantisation to int8 with its
scale, float16 updates, Morton codes (shifts, or, masks), float remainder of negatives, sign / log2 / log10 /
2**x / x**(1/2.2) / arccosh / sinh / cosh / degrees, cumulative max (maximum.accumulate), integer scans of masks, reductions
over axes (0, 1) of channel-last 3-d, integer prod over a short axis, the mean of a bool from an argmax,
any over the last axis of 3-d, argmax over axis 1 of 4-d, a column and a row broadcast together into 3-d,
complex64 abs and angle, int16 and uint16 arithmetic, flips of both axes, triangular masks from arange
comparisons, a global max feeding a map, channel slices of uint8 images. Run it with `run.py --table fresh2`.

Same rules as workloads.py (functions of `xp`, NumPy syntax, Python scalar constants). The torch adapter
(libs.TorchNS) and the numexpr tracer were given the names these call (log2, log10, sign, arccosh, sinh, cosh,
angle, flip, degrees, maximum.accumulate, int16 / uint16 / complex64): numexpr runs the ones it lacks in NumPy,
as its users would. Numba compiles what it can; the rest is recorded as not expressible.
"""
from . import workloads as W
from .workloads import F16, F32, F64, I32, I64, In, Workload, ROWNORM

_FRESH2_DIMS = {
    "cpu": dict(XR=2503, XC=1283, XN=2_000_003, XB=8, XCH=32, XH=97, XW=101, XLK=37, XLN=100_003, XPM=1999,
                XPK=503, XF=1025, XFT=2047, XPN=500_003, XPD=10, XP3=1_000_003, XTB=256, XTT=4099, XIH=1080,
                XIW=1439, XAR=8191, XAC=1000, XKB=8, XKT=1021, XKD=256, XSB=4, XSK=21, XSH=257, XSW=259,
                XKP=68, XHH=256, XHW=257, XS=2047),
    "h200": dict(XR=16_411, XC=6_163, XN=64_000_037, XB=32, XCH=64, XH=127, XW=131, XLK=37, XLN=4_000_037,
                 XPM=9_001, XPK=4_003, XF=1025, XFT=32_771, XPN=10_000_019, XPD=10, XP3=30_000_001, XTB=1024,
                 XTT=8191, XIH=4320, XIW=7681, XAR=65_537, XAC=1000, XKB=32, XKT=2047, XKD=1024, XSB=16, XSK=21,
                 XSH=513, XSW=515, XKP=256, XHH=512, XHW=513, XS=12_289),
    "test": dict(XR=37, XC=29, XN=1001, XB=2, XCH=3, XH=5, XW=7, XLK=5, XLN=103, XPM=11, XPK=7, XF=9, XFT=13,
                 XPN=101, XPD=10, XP3=101, XTB=3, XTT=17, XIH=9, XIW=14, XAR=23, XAC=19, XKB=2, XKT=5, XKD=4,
                 XSB=2, XSK=5, XSH=6, XSW=7, XKP=3, XHH=5, XHW=6, XS=33),
}
W.add_dims(_FRESH2_DIMS)

WORKLOADS: list[Workload] = []
fresh2 = W.registrar(WORKLOADS)
I16 = lambda *shape, **kw: In(shape, "int16", **kw)  # noqa: E731
U16 = lambda *shape, **kw: In(shape, "uint16", **kw)  # noqa: E731
U8 = lambda *shape, **kw: In(shape, "uint8", gen="int", lo=0, hi=256)  # noqa: E731
COLS = "one kernel: its phases (the column reductions, then the map) walk the same band of columns"


# ---- reductions with keepdims feeding a broadcast ------------------------------------------------------
@fresh2("norm", "InstanceNorm2d of NCHW (torch F.instance_norm, style transfer / pix2pix): mean and variance "
        "over (H, W) with keepdims, then the normalize", [F32("XB", "XCH", "XH", "XW")], 1, ideal_why=ROWNORM)
def instance_norm_nchw(xp, x):
    mu = xp.mean(x, axis=(2, 3), keepdims=True)
    var = xp.mean((x - mu) ** 2, axis=(2, 3), keepdims=True)
    return (x - mu) / xp.sqrt(var + 1e-5)


@fresh2("norm", "log-evidence of class-major log-likelihoods, scipy.special.logsumexp(a, axis=0) of (classes, "
        "samples) (naive Bayes / HMM state marginals), stable form", [F32("XLK", "XLN")], 1, ideal_why=COLS)
def logsumexp_cols(xp, a):
    m = xp.max(a, axis=0, keepdims=True)
    return xp.log(xp.sum(xp.exp(a - m), axis=0)) + m[0]


@fresh2("norm", "sklearn MinMaxScaler.fit_transform: (x - min_0) / (max_0 - min_0), two column reductions and "
        "the map", [F32("XR", "XC")], 1, ideal_why=COLS)
def minmax_scale_cols(xp, x):
    lo = xp.min(x, axis=0, keepdims=True)
    return (x - lo) / (xp.max(x, axis=0, keepdims=True) - lo)


@fresh2("reduce", "pandas DataFrame.mean() with skipna (numpy.nanmean(axis=0)) of a float64 table with ~5% "
        "NaN: NaN-zeroed column sums over the counts of valid entries", [F64("XR", "XC", gen="normal_nan")], 1)
def nanmean_cols_f64(xp, x):
    ok = ~xp.isnan(x)
    return xp.sum(xp.where(ok, x, 0.0), axis=0) / xp.sum(ok, axis=0)


@fresh2("reduce", "weighted row means, numpy.average(x, axis=1, weights=w) = (w * x).sum(1) / w.sum(1) "
        "(survey weights, importance sampling)", [F32("XR", "XC"), F32("XR", "XC", gen="uniform")], 1)
def weighted_mean_rows(xp, x, w):
    return xp.sum(w * x, axis=1) / xp.sum(w, axis=1)


@fresh2("norm", "Shannon entropy in bits of each row, scipy.stats.entropy(p, base=2, axis=1): normalize the "
        "row, then -sum(p log2 p)", [F32("XR", "XC", gen="uniform", lo=0.001, hi=1.0)], 1, ideal_why=ROWNORM)
def entropy_bits_rows(xp, x):
    p = x / xp.sum(x, axis=1, keepdims=True)
    return -xp.sum(p * xp.log2(p), axis=1)


@fresh2("reduce", "per-channel mean and std of a channel-last float image, over axes (0, 1) of (H, W, 3) "
        "(torchvision dataset normalisation constants), 2 outputs", [F32("XIH", "XIW", 3, gen="uniform")], 1,
        ideal_why="3 columns: mean, then the squared deviations, in one multi-phase kernel")
def channel_stats_hwc(xp, img):
    return xp.mean(img, axis=(0, 1)), xp.std(img, axis=(0, 1))


@fresh2("norm", "librosa.power_to_db(S, top_db=80): 10 log10(max(S, 1e-10)), then floored at its global max "
        "minus 80 dB", [F32("XF", "XFT", gen="uniform", lo=0.0, hi=10.0)], 1,
        ideal_why="one multi-phase kernel: the global max, then the floor map over the same array")
def power_to_db(xp, s):
    db = 10.0 * xp.log10(xp.maximum(s, 1e-10))
    return xp.maximum(db, xp.max(db) - 80.0)


# ---- broadcasting into 3-d ----------------------------------------------------------------------------
@fresh2("broadcast", "squared distances between two small 3-d point sets by broadcasting, ((a[:, None] - "
        "b[None]) ** 2).sum(-1) (scipy cdist 'sqeuclidean', ICP nearest-neighbour costs)",
        [F32("XPM", 3), F32("XPK", 3)], 1, memory_bound=False)
def pairwise_sqdist_3d(xp, a, b):
    return xp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)


@fresh2("broadcast", "Gaussian keypoint heatmaps (CenterNet / OpenPose targets): per-keypoint centres (K,) "
        "against a column of y (H,) and a row of x (W,) into (K, H, W)",
        [F32("XKP", gen="uniform", lo=0.0, hi=256.0), F32("XKP", gen="uniform", lo=0.0, hi=256.0),
         F32("XHH", gen="uniform", lo=0.0, hi=256.0), F32("XHW", gen="uniform", lo=0.0, hi=256.0)], 1)
def keypoint_heatmaps(xp, cx, cy, ys, xs):
    dx = xs[None, None, :] - cx[:, None, None]
    dy = ys[None, :, None] - cy[:, None, None]
    return xp.exp((dx * dx + dy * dy) * (-1.0 / 32.0))


@fresh2("where", "lower triangle of a matrix from arange comparisons, where(arange(n)[:, None] >= "
        "arange(n)[None, :], x, 0) (numpy.tril; causal masks)", [F32("XS", "XS")], 1)
def tril_arange(xp, x):
    i = xp.arange(x.shape[0])
    return xp.where(i[:, None] >= i[None, :], x, 0.0)


# ---- row and short-axis work ----------------------------------------------------------------------------
@fresh2("int", "dynamic per-token int8 quantisation (LLM.int8 vector-wise, SmoothQuant): scale = absmax / 127 "
        "per row, q = rint(x / scale) as int8; 2 outputs", [F32("XR", "XC")], 1, upcast_ref=False, int_tol=1,
        ideal_why=ROWNORM)
def int8_rowwise_quant(xp, x):
    s = xp.max(xp.abs(x), axis=-1, keepdims=True) * (1.0 / 127.0)
    return xp.astype(xp.rint(x / s), xp.int8), s


@fresh2("norm", "unit surface normals of a point cloud, v / ||v|| over rows of 3 (Open3D normalize_normals)",
        [F32("XP3", 3)], 1, ideal_why=ROWNORM)
def normalize_normals(xp, v):
    return v / xp.sqrt(xp.sum(v * v, axis=-1, keepdims=True))


@fresh2("science", "Poincare-ball distance of embedding pairs (Nickel & Kiela 2017): arccosh(1 + 2|u-v|^2 / "
        "((1-|u|^2)(1-|v|^2))), three reductions over rows of 10",
        [F32("XPN", "XPD", gen="uniform", lo=-0.3, hi=0.3), F32("XPN", "XPD", gen="uniform", lo=-0.3, hi=0.3)], 1,
        ideal_why="the three row reductions of two inputs in one kernel, as cosine_sim_rows")
def poincare_dist(xp, u, v):
    d = u - v
    uu = 1.0 - xp.sum(u * u, axis=-1)
    vv = 1.0 - xp.sum(v * v, axis=-1)
    return xp.arccosh(1.0 + 2.0 * xp.sum(d * d, axis=-1) / (uu * vv))


@fresh2("int", "voxel count of integer bounding boxes, prod(extent, axis=-1) of (boxes, 3) int32 -> int64 "
        "(scipy.ndimage.find_objects sizes)", [I32("XP3", 3, gen="int", lo=1, hi=200)], 1)
def box_volume_i32(xp, e):
    return xp.prod(e, axis=-1)


@fresh2("reduce", "top-1 accuracy, mean(argmax(logits, -1) == labels) (torchmetrics / sklearn accuracy_score "
        "of a classifier's logits)", [F32("XAR", "XAC"), I64("XAR", gen="int", lo=0, hi="XAC")], 2,
        ideal_why="a row kernel (argmax) then the mean of the comparisons over rows, as cross_entropy")
def top1_accuracy(xp, x, labels):
    return xp.mean(xp.argmax(x, axis=-1) == labels)


@fresh2("reduce", "Keras Masking layer: any(x != 0, axis=-1) over the features of (batch, time, features)",
        [F32("XKB", "XKT", "XKD")], 1)
def keras_masking(xp, x):
    return xp.any(x != 0.0, axis=-1)


@fresh2("arg", "semantic segmentation labels, logits.argmax(1) over the 21 classes of (N, C, H, W) (torchvision "
        "FCN / DeepLab on VOC)", [F32("XSB", "XSK", "XSH", "XSW")], 1)
def seg_argmax_nchw(xp, x):
    return xp.argmax(x, axis=1)


# ---- scans ----------------------------------------------------------------------------------------------
@fresh2("scan", "drawdown of price columns, x / maximum.accumulate(x, axis=0) - 1 (pandas cummax; empyrical "
        "max_drawdown), float64", [F64("XR", "XC", gen="uniform", lo=1.0, hi=2.0)], 1)
def drawdown_cols(xp, x):
    return x / xp.maximum.accumulate(x, axis=0) - 1.0


@fresh2("scan", "position ids from padded input ids (HF create_position_ids_from_input_ids): cumsum of the "
        "int32 mask along tokens times the mask, plus the pad id", [I64("XTB", "XTT", gen="int", lo=0, hi=6)], 1)
def position_ids(xp, ids):
    m = xp.astype(ids != 1, xp.int32)
    return xp.astype(xp.cumsum(m, axis=1) * m, xp.int64) + 1


# ---- elementwise math ---------------------------------------------------------------------------------
@fresh2("activation", "symlog, sign(x) * log1p(|x|) (DreamerV3 reward / value targets)", [F32("XN", gen="uniform",
        lo=-100.0, hi=100.0)], 1)
def symlog(xp, x):
    return xp.sign(x) * xp.log1p(xp.abs(x))


@fresh2("science", "MIDI note numbers to Hz, 440 * 2 ** ((m - 69) / 12) (librosa.midi_to_hz)",
        [F32("XN", gen="uniform", lo=21.0, hi=108.0)], 1)
def midi_to_hz(xp, m):
    return 440.0 * 2.0 ** ((m - 69.0) * (1.0 / 12.0))


@fresh2("science", "compass bearing in [0, 360) from east / north offsets, (degrees(arctan2(dx, dy)) + 360) % 360 "
        "(geographiclib / pyproj azimuths), float64 remainder", [F64("XN"), F64("XN")], 1, memory_bound=False)
def bearing_deg_f64(xp, dx, dy):
    return (xp.degrees(xp.arctan2(dx, dy)) + 360.0) % 360.0


@fresh2("science", "longitudinal and total momentum from pt and pseudorapidity, pt * sinh(eta), pt * cosh(eta) "
        "(scikit-hep vector, float64), 2 outputs", [F64("XN", gen="uniform", lo=1.0, hi=100.0),
        F64("XN", gen="uniform", lo=-4.0, hi=4.0)], 1, memory_bound=False)
def pt_eta_to_pz_p(xp, pt, eta):
    return pt * xp.sinh(eta), pt * xp.cosh(eta)


@fresh2("where", "sigmoid focal loss of RetinaNet (torchvision.ops.sigmoid_focal_loss, alpha 0.25, gamma 2, "
        "reduction='mean')", [F32("XN"), In(("XN",), "float32", gen="bernoulli")], 1)
def focal_loss(xp, z, y):
    p = 1.0 / (1.0 + xp.exp(-z))
    ce = xp.maximum(z, 0.0) - z * y + xp.log1p(xp.exp(-xp.abs(z)))
    pt = p * y + (1.0 - p) * (1.0 - y)
    a = 0.25 * y + 0.75 * (1.0 - y)
    return xp.mean(a * ce * (1.0 - pt) ** 2)


@fresh2("dtype", "float16 exponential moving average of weights, ema = 0.999 ema + 0.001 w (timm ModelEmaV2 in "
        "half precision)", [F16("XN"), F16("XN")], 1)
def ema_f16(xp, ema, w):
    return ema * 0.999 + w * 0.001


@fresh2("dtype", "STFT magnitude and phase of a complex64 spectrogram, abs(S) and angle(S) (librosa.magphase), "
        "2 outputs", [In(("XF", "XFT"), "complex64")], 1, memory_bound=False)
def stft_magphase(xp, s):
    return xp.abs(s), xp.angle(s)


@fresh2("power", "gamma correction of a float RGB image, x ** (1 / 2.2) (skimage.exposure.adjust_gamma; display "
        "encoding): a float power with a constant, non-special exponent", [F32("XIH", "XIW", 3, gen="uniform")], 1)
def gamma_correct(xp, x):
    return x ** (1.0 / 2.2)


# ---- integers -----------------------------------------------------------------------------------------
@fresh2("int", "2-d Morton (Z-order) codes of 16-bit grid coordinates by bit spreading: shifts, or, masks "
        "(libmorton; octree / quadtree keys), int64",
        [I64("XN", gen="int", lo=0, hi=65536), I64("XN", gen="int", lo=0, hi=65536)], 1)
def morton2d(xp, x, y):
    def spread(v):
        v = (v | (v << 8)) & 0x00FF00FF
        v = (v | (v << 4)) & 0x0F0F0F0F
        v = (v | (v << 2)) & 0x33333333
        return (v | (v << 1)) & 0x55555555
    return spread(x) | (spread(y) << 1)


@fresh2("int", "16-bit PCM to float, x.astype(float32) / 32768 (scipy.io.wavfile / soundfile dtype='float32')",
        [I16("XN", gen="int", lo=-32768, hi=32768)], 1)
def pcm16_to_float(xp, x):
    return xp.astype(x, xp.float32) * (1.0 / 32768.0)


@fresh2("int", "mixing two int16 PCM tracks with saturation, clip(a.astype(int32) + b, -32768, 32767) as int16 "
        "(pydub overlay / audioop.add)", [I16("XN", gen="int", lo=-32768, hi=32768),
        I16("XN", gen="int", lo=-32768, hi=32768)], 1)
def mix_int16(xp, a, b):
    return xp.astype(xp.clip(xp.astype(a, xp.int32) + b, -32768, 32767), xp.int16)


@fresh2("int", "uint16 depth image to metres with 0 as missing, where(d == 0, nan, d * 0.001) (RealSense / "
        "Open3D depth_scale)", [U16("XIH", "XIW", gen="int", lo=0, hi=10000)], 1)
def depth_u16_to_m(xp, d):
    return xp.where(d == 0, float("nan"), xp.astype(d, xp.float32) * 0.001)


@fresh2("int", "binary threshold of a uint8 grayscale image, (img > 127) * 255 as uint8 (cv2.threshold "
        "THRESH_BINARY)", [U8("XIH", "XIW")], 1)
def threshold_u8(xp, img):
    return xp.astype(img > 127, xp.uint8) * 255


@fresh2("strided", "uint8 RGB to float gray from the three channel slices, 0.2125 R + 0.7154 G + 0.0721 B over "
        "255 (skimage.color.rgb2gray)", [U8("XIH", "XIW", 3)], 1)
def rgb_to_gray_u8(xp, img):
    f = xp.astype(img, xp.float32) * (1.0 / 255.0)
    return 0.2125 * f[:, :, 0] + 0.7154 * f[:, :, 1] + 0.0721 * f[:, :, 2]


# ---- flips ----------------------------------------------------------------------------------------------
@fresh2("strided", "symmetrize under a 180-degree rotation, 0.5 * (x + flip(x)) = x[::-1, ::-1] (C2 symmetry "
        "averaging of a 2-d map; test-time augmentation by rotation)", [F32("XS", "XS")], 1)
def rot180_symmetrize(xp, x):
    return 0.5 * (x + xp.flip(x))


BY_NAME = {w.name: w for w in WORKLOADS}
assert len(BY_NAME) == len(WORKLOADS), "duplicate fresh2 names"
assert not set(BY_NAME) & set(W.BY_NAME), "a fresh2 workload shares a name with a suite workload"

from . import workloads_fresh as _F, workloads_probe as _P  # noqa: E402
assert not set(BY_NAME) & set(_P.BY_NAME), "a fresh2 workload shares a name with a probe"
assert not set(BY_NAME) & set(_F.BY_NAME), "a fresh2 workload shares a name with a fresh workload"
