"""_random_host.py: the distributions of loom.random that have no fused device form yet (those NumPy and
CuPy sample by rejection or with special functions: gamma, beta, binomial, poisson, ...).

They are sampled by NumPy's Generator on the HOST and copied to the current device (a host round trip on
a GPU; the README lists them). Streams stay Loom's and reproducible: each call draws from NumPy's
Philox4x64 keyed by the 128-bit (Loom key, Loom counter) of the calling generator, then advances that
counter by one (taken before sampling, under the generator's lock: threads sharing a generator get
distinct streams), so a seed gives the same values on every device and two calls never share a stream.
Parameters and their checks are NumPy's (its ValueError for a negative scale, say);
the result is cast to dtype (CuPy's dtype= of RandomState, after size= as CuPy's signatures have it, any
dtype loom supports, as CuPy casts), or keeps NumPy's dtype for Generator methods.
"""
import numpy

from ._common import _cur, _from_numpy
from ._ndarray import ndarray

_REQ = object()
# name -> (parameters with defaults, kind of the result: 'f' continuous, 'i' counts)
SPECS = {
    "beta": ((("a", _REQ), ("b", _REQ)), "f"),
    "binomial": ((("n", _REQ), ("p", _REQ)), "i"),
    "chisquare": ((("df", _REQ),), "f"),
    "dirichlet": ((("alpha", _REQ),), "f"),
    "f": ((("dfnum", _REQ), ("dfden", _REQ)), "f"),
    "gamma": ((("shape", _REQ), ("scale", 1.0)), "f"),
    "geometric": ((("p", _REQ),), "i"),
    "gumbel": ((("loc", 0.0), ("scale", 1.0)), "f"),
    "hypergeometric": ((("ngood", _REQ), ("nbad", _REQ), ("nsample", _REQ)), "i"),
    "laplace": ((("loc", 0.0), ("scale", 1.0)), "f"),
    "logistic": ((("loc", 0.0), ("scale", 1.0)), "f"),
    "lognormal": ((("mean", 0.0), ("sigma", 1.0)), "f"),
    "logseries": ((("p", _REQ),), "i"),
    "multivariate_normal": ((("mean", _REQ), ("cov", _REQ)), "f"),
    "negative_binomial": ((("n", _REQ), ("p", _REQ)), "i"),
    "noncentral_chisquare": ((("df", _REQ), ("nonc", _REQ)), "f"),
    "noncentral_f": ((("dfnum", _REQ), ("dfden", _REQ), ("nonc", _REQ)), "f"),
    "pareto": ((("a", _REQ),), "f"),
    "poisson": ((("lam", 1.0),), "i"),
    "power": ((("a", _REQ),), "f"),
    "rayleigh": ((("scale", 1.0),), "f"),
    "standard_cauchy": ((), "f"),
    "standard_gamma": ((("shape", _REQ),), "f"),
    "standard_t": ((("df", _REQ),), "f"),
    "triangular": ((("left", _REQ), ("mode", _REQ), ("right", _REQ)), "f"),
    "vonmises": ((("mu", _REQ), ("kappa", _REQ)), "f"),
    "wald": ((("mean", _REQ), ("scale", _REQ)), "f"),
    "weibull": ((("a", _REQ),), "f"),
    "zipf": ((("a", _REQ),), "i"),
}
_EXTRA = {"multivariate_normal": ("check_valid", "tol", "method")}  # NumPy keywords passed through


def _host(x):
    """A parameter as NumPy sees it: loom arrays copied to the host, the rest unchanged."""
    if isinstance(x, ndarray):
        return x.get()
    if isinstance(x, (list, tuple)):
        return [_host(v) for v in x]
    return x


def _bind(name, args, kwargs, legacy):
    """NumPy's keyword arguments of distribution `name` from a call's positional and keyword ones, and the
    dtype (legacy: CuPy's RandomState signature, dtype after size and NumPy's extra keywords)."""
    params, kind = SPECS[name]
    allowed = [p for p, _ in params] + ["size"] + list(_EXTRA.get(name, ())) + (["dtype"] if legacy else [])
    if len(args) > len(allowed):
        raise TypeError(f"{name}() takes at most {len(allowed)} positional arguments ({len(args)} given)")
    bound = dict(zip(allowed, args))
    for k, v in kwargs.items():
        if k not in allowed:
            raise TypeError(f"{name}() got an unexpected keyword argument {k!r}")
        if k in bound:
            raise TypeError(f"{name}() got multiple values for argument {k!r}")
        bound[k] = v
    for p, default in params:
        if p not in bound:
            if default is _REQ:
                raise TypeError(f"{name}() missing required argument {p!r}")
            bound[p] = default
    dtype = bound.pop("dtype", (numpy.float64 if kind == "f" else numpy.int64) if legacy else None)
    return {k: _host(v) for k, v in bound.items()}, dtype


def sample(bit_generator, name, args, kwargs, legacy, dtype=None):
    """Values of distribution `name` drawn with the state of bit_generator (loom.random.BitGenerator), as
    a loom array on the current device, cast to the dtype asked (None: NumPy's dtype)."""
    params, asked = _bind(name, args, kwargs, legacy)
    d = numpy.dtype(dtype if dtype is not None else asked) if (dtype is not None or asked is not None) else None
    key = (bit_generator._key << 64) | bit_generator._take(1)
    rng = numpy.random.Generator(numpy.random.Philox(key=key, counter=0))
    out = numpy.asarray(getattr(rng, name)(**params))
    if d is not None and out.dtype != d:
        out = out.astype(d)
    return _from_numpy(out, copy=True, device=_cur())


def legacy_method(name):
    """RandomState.<name>(params..., size=None, dtype=CuPy's default): float64 or int64 unless dtype says."""
    def method(self, *args, **kwargs):
        return sample(self._gen.bit_generator, name, args, kwargs, True)
    method.__name__ = name
    method.__doc__ = (f"{name} samples as numpy.random.RandomState.{name}, cast to dtype; sampled on the host "
                      f"by NumPy and copied to the device (loom._random_host)")
    return method


def generator_method(name):
    """Generator.<name>(params..., size=None): NumPy's Generator signature and result dtype
    (standard_gamma also takes dtype= and out=, as NumPy's)."""
    if name == "standard_gamma":
        def method(self, shape, size=None, dtype=numpy.float64, out=None):
            if out is not None and size is None:
                size = out.shape
            r = sample(self.bit_generator, name, (shape, size), {}, False, dtype)
            if out is not None:
                out[...] = r
                return out
            return r
    else:
        def method(self, *args, **kwargs):  # type: ignore[misc]  # (the two variants' signatures differ)
            return sample(self.bit_generator, name, args, kwargs, False)
    method.__name__ = name
    method.__doc__ = (f"{name} samples as numpy.random.Generator.{name}; sampled on the host by NumPy and "
                      f"copied to the device (loom._random_host)")
    return method
