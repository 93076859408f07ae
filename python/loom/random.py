"""loom.random: random numbers made inside the kernels that use them (counter-based, Philox4x32-10).

Every draw is a pure function of a 64-bit key and a 64-bit counter: the graph op `random_bits(key,
counter)` is Philox4x32-10 (the generator of Random123, cuRAND and JAX), lowered once in the shared
code generator, so the host, NVIDIA and AMD GPUs give the same bits for the same seed, and the draws
fuse into the expression that consumes them: `where(rng.random(x.shape) > p, x / (1 - p), 0)` is one
kernel that reads x and writes its result; the random numbers are never stored. A generator keeps
(key, counter); a draw of n numbers uses counters counter .. counter + n - 1 (element i of the
C-ordered result takes counter + i) and advances the counter by n. Key and counter enter the kernels
as a small input array, so a new seed or a new draw compiles nothing.

The streams are Loom's own: NumPy's and CuPy's generators use other algorithms, so the same seed gives
other numbers than theirs, but Loom's streams are stable across Loom versions and devices (the
distributions below are part of that contract; a change to one is a breaking change).

Distributions (graph expressions over the 64 random bits b of an element):
- random / uniform: float64 (b >> 11) * 2**-53, float32 (b >> 40) * 2**-24: [0, 1), every value a
  multiple of the ulp at 0.5, as NumPy's Generator;
- standard_normal / normal / randn: Box-Muller on two 53-bit uniforms of one Philox block (words 0-1
  and 2-3): sqrt(-2 log(1 - u1)) * cos(2 pi u2), computed in float64 and rounded once to float32 when
  asked (tails out to 8.5 sigma);
- exponential: -log1p(-u) * scale (53-bit u);
- integers / randint: low + floor(b * r / 2**64) for the range r = high - low (multiply-shift, no
  rejection: |P(k) - 1/r| <= 2**-64 for every k, i.e. a relative bias of at most r / 2**64);
- permutation / shuffle / choice(replace=False): the order of one 64-bit random key per element
  (a stable argsort, computed on a host copy of the keys until a device sort exists; the same
  permutation on every device); choice with replacement: integers, or with p= the inverse CDF (u compared with the
  cumulative p, as graph ops: runs on any device).
Seeds: an int (any size, or a sequence of ints) is folded into the 64-bit key by SplitMix64; None draws
the key from os.urandom.
"""
import operator
import os
import threading

import numpy

from . import _core
from ._common import _np_dtype_of, _OPS, _code, _shape_tuple, _cur, _from_numpy, _norm_axis
from ._ndarray import ndarray, _finish
from . import _random_host

__all__ = ["seed", "get_random_state", "set_random_state", "reset_states", "RandomState", "Generator",
           "BitGenerator", "Philox", "Philox4x3210", "default_rng", "rand", "randn", "randint", "random_integers",
           "random_sample", "random", "ranf", "sample", "uniform", "normal", "standard_normal", "exponential",
           "standard_exponential", "permutation", "shuffle", "choice", "bytes"] + sorted(_random_host.SPECS)

_M64 = (1 << 64) - 1
_U64 = _code(numpy.uint64)


def _splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & _M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _key_of(seed):
    """The 64-bit Philox key of a seed (stable across Loom versions): SplitMix64 over its 64-bit words."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, (ndarray, numpy.ndarray, list, tuple)):
        words = [operator.index(w) for w in numpy.asarray(seed.get() if isinstance(seed, ndarray) else seed).ravel()]
    else:
        try:
            words = [operator.index(seed)]
        except TypeError:
            raise TypeError(f"seed must be None, an int or a sequence of ints, not {type(seed).__name__}") from None
    h = len(words)
    for w in words:
        if w < 0:
            raise ValueError("seed must be non-negative")
        while True:  # every 64-bit word of w, then a terminator, so 1 and 1 + 2**64 differ
            h = _splitmix64(h ^ (w & _M64))
            w >>= 64
            if not w:
                break
        h = _splitmix64(h ^ 0x5851F42D4C957F2D)
    return h


# ---- the bit generator ---------------------------------------------------------------------------
class BitGenerator:
    """The state of a counter-based stream: a 64-bit key and a 64-bit counter (see loom.random)."""

    def __init__(self, seed=None):
        self._key = _key_of(seed)
        self._counter = 0
        self._lock = threading.Lock()  # threads sharing a generator take disjoint counters

    def __getstate__(self):  # pickle / copy: the key and counter (a lock is not copied)
        return {"_key": self._key, "_counter": self._counter}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def state(self):
        return {"bit_generator": "Philox4x32-10 (loom)", "key": self._key, "counter": self._counter}

    @state.setter
    def state(self, value):
        self._key = operator.index(value["key"]) & _M64
        self._counter = operator.index(value["counter"]) & _M64

    def advance(self, delta):
        """Skips delta draws (counters), as numpy.random.Philox.advance."""
        self._counter = (self._counter + operator.index(delta)) & _M64
        return self

    def _take(self, n):
        with self._lock:
            c = self._counter
            self._counter = (c + n) & _M64
        return c


Philox = Philox4x3210 = BitGenerator  # CuPy's name for its Philox4x32-10 bit generator


def _device(device):
    return _cur() if device is None else device


def _bits(bg, shape, device=None, both=False):
    """uint64 random bits of `shape` (lazy graph nodes): b or (b, b2) where b2 are the same blocks'
    other two words. Consumes prod(shape) counters of bg."""
    shape = _shape_tuple(shape)
    n = int(numpy.prod(shape, dtype=numpy.int64)) if shape else 1
    base = bg._take(n)
    state = _from_numpy(numpy.array([bg._key, base], dtype=numpy.uint64), copy=True, device=_device(device))
    key, ctr0 = state[0], state[1]
    ctr = _core.binary(_OPS["add"], _core.cast(_core.iota(shape), _U64), ctr0)
    b = _core.binary(_OPS["random_bits"], key, ctr)
    if not both:
        return b
    return b, _core.binary(_OPS["random_bits_hi"], key, ctr)


def _unit(b, dtype):
    """[0, 1) uniform of dtype float32 or float64 from uint64 bits b."""
    if _np_dtype_of(dtype) == numpy.float32:
        return _core.binary(_OPS["mul"], _core.cast(_core.binary(_OPS["right_shift"], b, 40), _code(numpy.float32)),
                            2.0 ** -24)
    return _core.binary(_OPS["mul"], _core.cast(_core.binary(_OPS["right_shift"], b, 11), _code(numpy.float64)),
                        2.0 ** -53)


def _float_dtype(dtype, name, allowed=("float32", "float64")):
    d = _np_dtype_of(dtype)
    if d.name not in allowed:
        raise TypeError(f"{name}: dtype must be one of {', '.join(allowed)}, not {d}")
    return d


def _size(size):
    return () if size is None else _shape_tuple(size)


def _as_param(x, dtype=numpy.float64):
    """A distribution parameter: Python scalars stay scalars; arrays become loom float arrays."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if isinstance(x, numpy.generic):
        return float(x)
    from ._creation import asarray
    return asarray(x).astype(dtype)


def _param_shape(size, *params):
    if size is not None:
        return _size(size)
    shapes = [p.shape for p in params if isinstance(p, ndarray)]
    return numpy.broadcast_shapes(*shapes) if shapes else ()


def _check_shape_fits(shape, params, name):
    for p in params:
        if isinstance(p, ndarray) and numpy.broadcast_shapes(p.shape, shape) != tuple(shape):
            raise ValueError(f"{name}: parameter of shape {p.shape} does not broadcast to size {shape}")


def _standard_normal(bg, shape, dtype, device=None):
    b1, b2 = _bits(bg, shape, device, both=True)
    u1 = _core.binary(_OPS["sub"], 1.0, _unit(b1, numpy.float64))  # (0, 1]: log is finite
    u2 = _unit(b2, numpy.float64)
    r = _core.unary(_OPS["sqrt"], _core.binary(_OPS["mul"], -2.0, _core.unary(_OPS["log"], u1)))
    z = _core.binary(_OPS["mul"], r, _core.unary(_OPS["cos"], _core.binary(_OPS["mul"], u2, 2.0 * numpy.pi)))
    return z if _np_dtype_of(dtype) == numpy.float64 else _core.cast(z, _code(dtype))


def _mulhi64(x, r):
    """floor(x * r / 2**64) for uint64 x (array) and 0 < r < 2**64 (int or uint64 array), in uint64 graph
    ops (the 32-bit halves' four partial products)."""
    mask = 0xFFFFFFFF
    b = lambda name, p, q: _core.binary(_OPS[name], p, q)  # noqa: E731
    xh, xl = b("right_shift", x, 32), b("bitwise_and", x, mask)
    if isinstance(r, int):
        rh, rl = r >> 32, r & mask
        if rh == 0:
            return b("right_shift", b("add", b("mul", xh, rl), b("right_shift", b("mul", xl, rl), 32)), 32)
        rh, rl = numpy.uint64(rh), numpy.uint64(rl)
        rh, rl = _core.const(int(rh), _U64), _core.const(int(rl), _U64)
    else:
        rh, rl = b("right_shift", r, 32), b("bitwise_and", r, mask)
    t = b("mul", xl, rl)
    m1 = b("add", b("mul", xh, rl), b("right_shift", t, 32))
    m2 = b("add", b("mul", xl, rh), b("bitwise_and", m1, mask))
    return b("add", b("add", b("mul", xh, rh), b("right_shift", m1, 32)), b("right_shift", m2, 32))


def _int_bound(x, name):
    """An integer bound: ints as they are, floats truncated toward zero as NumPy's randint / integers do."""
    if isinstance(x, (float, numpy.floating)):
        if not numpy.isfinite(x):
            raise ValueError(f"{name}: bound {x} is not finite")
        return int(x)
    return operator.index(x)


def _integers(bg, low, high, shape, dtype, endpoint, device=None, name="integers"):
    dt = _np_dtype_of(dtype)
    if dt.kind not in "iu" and dt != numpy.bool_:
        raise TypeError(f"{name}: dtype must be an integer dtype, not {dt}")
    info = numpy.iinfo(dt) if dt != numpy.bool_ else None
    lo_lim, hi_lim = (0, 1) if info is None else (int(info.min), int(info.max))
    if isinstance(low, ndarray) or isinstance(high, ndarray) or isinstance(low, (numpy.ndarray, list)) \
            or isinstance(high, (numpy.ndarray, list)):
        return _integers_arrays(bg, low, high, shape, dt, endpoint, device, name, lo_lim, hi_lim)
    low, high = _int_bound(low, name), _int_bound(high, name)
    top = high if endpoint else high - 1
    if top < low:
        raise ValueError(f"{name}: low >= high" if not endpoint else f"{name}: low > high")
    if low < lo_lim or top > hi_lim:
        raise ValueError(f"{name}: [{low}, {top}] is out of bounds for {dt}")
    r = top - low + 1  # 1 .. 2**64
    b = _bits(bg, shape, device)
    v = b if r == 1 << 64 else _mulhi64(b, r)
    v = _core.binary(_OPS["add"], v, _core.const(low & _M64, _U64))  # mod 2**64: the cast wraps back
    return _core.cast(v, _code(dt))


def _integers_arrays(bg, low, high, shape, dt, endpoint, device, name, lo_lim, hi_lim):
    from ._creation import asarray
    lo, hi = numpy.asarray(low.get() if isinstance(low, ndarray) else low), \
        numpy.asarray(high.get() if isinstance(high, ndarray) else high)
    top = hi.astype(object) + (0 if endpoint else -1)
    if numpy.any(top < lo.astype(object)):
        raise ValueError(f"{name}: low >= high")
    if numpy.any(lo.astype(object) < lo_lim) or numpy.any(top > hi_lim):
        raise ValueError(f"{name}: bounds out of range for {dt}")
    shape = numpy.broadcast_shapes(lo.shape, hi.shape) if shape is None else _size(shape)
    r = (top - lo.astype(object) + 1)
    if numpy.any(r >= 1 << 64):
        raise ValueError(f"{name}: a range of 2**64 values needs scalar bounds")
    ra = asarray(numpy.broadcast_to(numpy.asarray(r, dtype=numpy.uint64), shape))
    la = asarray(numpy.broadcast_to(numpy.asarray(lo.astype(object) & _M64, dtype=numpy.uint64), shape))
    b = _bits(bg, shape, device)
    v = _core.binary(_OPS["add"], _mulhi64(b, ra), la)
    return _core.cast(v, _code(dt))


def _host_order(keys, name):
    """Stable argsort of uint64 keys: HOST-COMPUTED (a device sort does not exist yet); GPU keys are copied
    to the host (the bits are the same on every device, so the permutation is too)."""
    return numpy.argsort(keys.get(), kind="stable")


# ---- NumPy's Generator ---------------------------------------------------------------------------
class Generator:
    """numpy.random.Generator's API over Loom's counter-based stream (loom.random)."""

    def __init__(self, bit_generator=None):
        self.bit_generator = bit_generator if isinstance(bit_generator, BitGenerator) else BitGenerator(bit_generator)

    def __repr__(self):
        return f"Generator(Philox4x32-10, key={self.bit_generator._key:#x})"

    def spawn(self, n):
        """n independent generators (keys derived from this one's key and a child number)."""
        k = self.bit_generator._key
        return [Generator(BitGenerator([k, i + 1, 0x5370617766])) for i in range(operator.index(n))]

    def random(self, size=None, dtype=numpy.float64, out=None):
        """Uniform floats in [0, 1) (53 bits for float64, 24 for float32)."""
        dt = _float_dtype(dtype, "random")
        shape = out.shape if (out is not None and size is None) else _size(size)
        return _finish(_unit(_bits(self.bit_generator, shape), dt), out)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=numpy.float64):
        lo, hi = _as_param(low), _as_param(high)
        shape = _param_shape(size, lo, hi)
        _check_shape_fits(shape, (lo, hi), "uniform")
        u = _unit(_bits(self.bit_generator, shape), numpy.float64)
        r = _core.binary(_OPS["add"], lo, _core.binary(_OPS["mul"], _core.binary(_OPS["sub"], hi, lo), u))
        return r if _np_dtype_of(dtype) == numpy.float64 else _core.cast(r, _code(_float_dtype(dtype, "uniform")))

    def standard_normal(self, size=None, dtype=numpy.float64, out=None):
        dt = _float_dtype(dtype, "standard_normal")
        shape = out.shape if (out is not None and size is None) else _size(size)
        return _finish(_standard_normal(self.bit_generator, shape, dt), out)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=numpy.float64):
        mu, sigma = _as_param(loc), _as_param(scale)
        if isinstance(sigma, float) and sigma < 0:
            raise ValueError("normal: scale < 0")
        shape = _param_shape(size, mu, sigma)
        _check_shape_fits(shape, (mu, sigma), "normal")
        z = _standard_normal(self.bit_generator, shape, numpy.float64)
        r = _core.binary(_OPS["add"], mu, _core.binary(_OPS["mul"], sigma, z))
        return r if _np_dtype_of(dtype) == numpy.float64 else _core.cast(r, _code(_float_dtype(dtype, "normal")))

    def standard_exponential(self, size=None, dtype=numpy.float64, method="inv", out=None):
        dt = _float_dtype(dtype, "standard_exponential")
        shape = out.shape if (out is not None and size is None) else _size(size)
        u = _unit(_bits(self.bit_generator, shape), numpy.float64)
        e = _core.unary(_OPS["neg"], _core.unary(_OPS["log1p"], _core.unary(_OPS["neg"], u)))
        return _finish(e if dt == numpy.float64 else _core.cast(e, _code(dt)), out)

    def exponential(self, scale=1.0, size=None, dtype=numpy.float64):
        s = _as_param(scale)
        if isinstance(s, float) and s < 0:
            raise ValueError("exponential: scale < 0")
        shape = _param_shape(size, s)
        e = self.standard_exponential(shape)
        r = _core.binary(_OPS["mul"], e, s)
        return r if _np_dtype_of(dtype) == numpy.float64 else _core.cast(r, _code(_float_dtype(dtype, "exponential")))

    def integers(self, low, high=None, size=None, dtype=numpy.int64, endpoint=False):
        """Integers in [low, high) ([low, high] with endpoint=True); multiply-shift (loom.random)."""
        if high is None:
            low, high = 0, low
        shape = None if size is None and (isinstance(low, (ndarray, numpy.ndarray, list)) or
                                          isinstance(high, (ndarray, numpy.ndarray, list))) else _size(size)
        return _integers(self.bit_generator, low, high, shape, dtype, endpoint)

    def permutation(self, x, axis=0):
        """A random permutation of arange(x) (int x) or a permuted copy of x along axis (host sort)."""
        from ._creation import asarray
        if isinstance(x, (int, numpy.integer)):
            n = operator.index(x)
            keys = _bits(self.bit_generator, (n,))
            return _from_numpy(_host_order(keys, "permutation").astype(numpy.int64), copy=True)
        x = asarray(x)
        if x.ndim == 0:
            raise numpy.exceptions.AxisError("permutation: x must be an integer or at least 1-dimensional")
        axis = _norm_axis(axis, x.ndim)
        keys = _bits(self.bit_generator, (x.shape[axis],), x._device)
        order = _host_order(keys, "permutation")
        return _from_numpy(numpy.take(x.get(), order, axis=axis), copy=True, device=x._device)

    def permuted(self, x, axis=None, out=None):
        from ._creation import asarray
        x = asarray(x)
        h = x.get()
        if axis is None:
            flat = h.ravel()
            keys = _bits(self.bit_generator, (flat.size,), x._device)
            r = flat[_host_order(keys, "permuted")].reshape(h.shape)
        else:
            axis = _norm_axis(axis, x.ndim)
            moved = numpy.moveaxis(h, axis, -1)
            keys = _bits(self.bit_generator, moved.shape, x._device)
            order = numpy.argsort(keys.get(), axis=-1, kind="stable")
            r = numpy.moveaxis(numpy.take_along_axis(moved, order, -1), -1, axis)
        return _finish(_from_numpy(r, copy=True, device=x._device), out)

    def shuffle(self, x, axis=0):
        """Shuffles x in place along axis (host sort of random keys)."""
        if not isinstance(x, ndarray):
            raise TypeError("shuffle: x must be a loom.ndarray (NumPy arrays: use numpy.random)")
        x[...] = self.permutation(x, axis)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Samples of arange(a) (int a) or of a's entries along axis. With replacement: integers (or the
        inverse CDF of p, as graph ops: any device); without: the first entries of a permutation."""
        from ._creation import asarray
        pop = operator.index(a) if isinstance(a, (int, numpy.integer)) else None
        arr = None if pop is not None else asarray(a)
        if arr is not None:
            if arr.ndim == 0:
                raise ValueError("choice: a must be a positive integer or at least 1-dimensional")
            pop = arr.shape[_norm_axis(axis, arr.ndim)]
        if pop < 0 or (pop == 0 and (size is None or numpy.prod(_size(size)) > 0)):
            raise ValueError("choice: a cannot be empty unless no samples are taken")
        shape = _size(size)
        n = int(numpy.prod(shape, dtype=numpy.int64))
        if p is not None:
            pv = numpy.asarray(p.get() if isinstance(p, ndarray) else p, dtype=numpy.float64)
            if pv.ndim != 1 or pv.size != pop:
                raise ValueError("choice: p must be 1-dimensional with one entry per element of a")
            if numpy.any(pv < 0) or not numpy.isclose(pv.sum(), 1.0, rtol=0, atol=1e-8):
                raise ValueError("choice: probabilities must be non-negative and sum to 1")
        if not replace:
            if n > pop:
                raise ValueError("choice: cannot take a larger sample than the population when replace=False")
            if p is not None:
                raise NotImplementedError("choice: replace=False with p= is not supported yet")
            dev = arr._device if arr is not None else None
            keys = _bits(self.bit_generator, (pop,), dev)
            idx = _host_order(keys, "choice")[:n].reshape(shape)
            if arr is None:
                return _from_numpy(idx.astype(numpy.int64), copy=True)
            return _from_numpy(numpy.take(arr.get(), idx, axis=axis), copy=True, device=arr._device)
        if p is None:
            idx = _integers(self.bit_generator, 0, pop, shape, numpy.int64, False,
                            None if arr is None else arr._device, "choice")
        else:  # inverse CDF: the number of cumulative probabilities at or below u
            cdf = numpy.cumsum(pv)
            cdf /= cdf[-1]
            u = _unit(_bits(self.bit_generator, shape, None if arr is None else arr._device), numpy.float64)
            c = _from_numpy(cdf[:-1].reshape((1,) * len(shape) + (pop - 1,)), copy=True,
                            device=_cur() if arr is None else arr._device)
            ge = _core.binary(_OPS["ge"], _core.movement(4, u, len(shape), None, None) if shape else u, c)
            idx = _core.reduce(0, ge, (len(shape),), False, -1)
        if arr is None:
            return idx
        return arr[(slice(None),) * _norm_axis(axis, arr.ndim) + (idx,)]  # a gather along axis

    def bytes(self, length):
        b = _bits(self.bit_generator, ((operator.index(length) + 7) // 8,))
        return b.get().tobytes()[:length]


def default_rng(seed=None):
    """A Generator seeded with seed (an int, a sequence of ints, a BitGenerator, a Generator or None)."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


# ---- CuPy's legacy API ---------------------------------------------------------------------------
class RandomState:
    """cupy.random.RandomState over Loom's counter-based stream (loom.random)."""

    def __init__(self, seed=None):
        self._gen = Generator(seed)

    def seed(self, seed=None):
        self._gen = Generator(seed)

    def rand(self, *size, dtype=numpy.float64):
        return self.random_sample(size, dtype)

    def randn(self, *size, dtype=numpy.float64):
        return self.standard_normal(size, dtype)

    def random_sample(self, size=None, dtype=numpy.float64):
        return self._gen.random(size, _float_dtype(dtype, "random_sample"))

    random = ranf = sample = random_sample

    def uniform(self, low=0.0, high=1.0, size=None, dtype=numpy.float64):
        return self._gen.uniform(low, high, size, dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=numpy.float64):
        return self._gen.normal(loc, scale, size, dtype)

    def standard_normal(self, size=None, dtype=numpy.float64):
        return self._gen.standard_normal(size, dtype)

    def exponential(self, scale=1.0, size=None, dtype=numpy.float64):
        return self._gen.exponential(scale, size, dtype)

    def standard_exponential(self, size=None, dtype=numpy.float64):
        return self._gen.standard_exponential(size, dtype)

    def randint(self, low, high=None, size=None, dtype=int):
        return self._gen.integers(low, high, size, _np_dtype_of(dtype))

    def random_integers(self, low, high=None, size=None):
        if high is None:
            low, high = 1, low
        return self._gen.integers(low, high, size, numpy.int64, endpoint=True)

    def permutation(self, num):
        return self._gen.permutation(num)

    def shuffle(self, a):
        self._gen.shuffle(a)

    def choice(self, a, size=None, replace=True, p=None):
        return self._gen.choice(a, size, replace, p)

    def tomaxint(self, size=None):
        return self._gen.integers(0, numpy.iinfo(numpy.int64).max, size)

    def get_state(self):
        return self._gen.bit_generator.state

    def set_state(self, state):
        self._gen.bit_generator.state = state


_states = {}


def get_random_state():
    """The RandomState of the current device (CuPy: one per device), seeded from CUPY_SEED if set."""
    dev = _cur()
    rs = _states.get(dev)
    if rs is None:
        env = os.environ.get("CUPY_SEED")
        rs = _states[dev] = RandomState(None if env is None else int(env))
    return rs


def set_random_state(rs):
    if not isinstance(rs, RandomState):
        raise TypeError("set_random_state: a loom.random.RandomState is required")
    _states[_cur()] = rs


def reset_states():
    """Forgets every device's RandomState (a new table, as CuPy's: code that kept the old one keeps it)."""
    global _states
    _states = {}


def seed(seed=None):
    """Seeds the current device's RandomState (cupy.random.seed)."""
    get_random_state().seed(seed)


def rand(*size, dtype=numpy.float64):
    return get_random_state().rand(*size, dtype=dtype)


def randn(*size, dtype=numpy.float64):
    return get_random_state().randn(*size, dtype=dtype)


def randint(low, high=None, size=None, dtype=int):
    return get_random_state().randint(low, high, size, dtype)


def random_integers(low, high=None, size=None):
    return get_random_state().random_integers(low, high, size)


def random_sample(size=None, dtype=numpy.float64):
    return get_random_state().random_sample(size, dtype)


random = ranf = sample = random_sample


def uniform(low=0.0, high=1.0, size=None, dtype=numpy.float64):
    return get_random_state().uniform(low, high, size, dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype=numpy.float64):
    return get_random_state().normal(loc, scale, size, dtype)


def standard_normal(size=None, dtype=numpy.float64):
    return get_random_state().standard_normal(size, dtype)


def exponential(scale=1.0, size=None, dtype=numpy.float64):
    return get_random_state().exponential(scale, size, dtype)


def standard_exponential(size=None, dtype=numpy.float64):
    return get_random_state().standard_exponential(size, dtype)


def permutation(num):
    return get_random_state().permutation(num)


def shuffle(a):
    get_random_state().shuffle(a)


def choice(a, size=None, replace=True, p=None):
    return get_random_state().choice(a, size, replace, p)


def bytes(length):
    return get_random_state()._gen.bytes(length)


# ---- the distributions sampled on the host (loom._random_host says how and why) ----------------------
def _module_function(name):
    def function(*args, **kwargs):
        return getattr(get_random_state(), name)(*args, **kwargs)
    function.__name__ = name
    function.__doc__ = (f"{name} samples from the current device's RandomState (numpy.random.{name}'s "
                        f"parameters, CuPy's dtype=); sampled on the host by NumPy, see loom._random_host")
    return function


for _name in _random_host.SPECS:
    setattr(RandomState, _name, _random_host.legacy_method(_name))
    setattr(Generator, _name, _random_host.generator_method(_name))
    globals()[_name] = _module_function(_name)
del _name
