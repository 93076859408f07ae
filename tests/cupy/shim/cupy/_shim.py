"""The machinery of the cupy -> loom shim (tests/cupy/README.md).

A module `cupy.X` (or `cupyx.X`, `cupy_backends.X`) resolves, in order, to
  1. a module of this shim (CuPy-internal names mapped onto loom: cupy._core, cupy.cuda, ...),
  2. a module of the vendored CuPy (cupy.testing),
  3. for a public name, a proxy of the loom module `loom.X` (cupy.linalg -> loom.linalg): its public
     names are loom's, a name loom lacks raises AttributeError "module 'cupy.linalg' (loom) has no
     attribute 'det'", as `import loom as cp` would for a user,
  4. else a *missing stub*: importing it succeeds (so one missing name does not stop a whole test file
     from being collected) and every use of it raises MissingInLoom naming it, so the tests that need
     it fail one by one with a precise reason while the others run. Subclassing a missing class works;
     instantiating it raises.
Nothing here computes array values: arrays are always loom's.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

ROOTS = ("cupy", "cupyx", "cupy_backends")


class MissingInLoom(NotImplementedError):
    """A CuPy name that loom (and this shim) does not provide was used."""


class NeedsCudaDevice(RuntimeError):
    """A CuPy name of an API that CuPy documents as talking to a CUDA device (DEVICE_APIS) was used on a
    machine where loom has no GPU: the call cannot be answered here by any implementation (CuPy itself
    raises cudaErrorNoDevice), so the harness reports the test as skipped, not failed. With a GPU the
    same name raises MissingInLoom (a real failure: loom lacks it)."""


# CuPy's modules whose functions drive the CUDA device itself (CuPy's API reference: "Low-level CUDA
# support"): the runtime and driver APIs, raw device memory, NVRTC and its kernel cache, textures, graphs, the CUDA
# libraries' handles (cuFFT plans among them). A name of these that loom lacks needs a CUDA device.
DEVICE_APIS = ("cupy.cuda.runtime.", "cupy.cuda.driver.", "cupy.cuda.memory.", "cupy.cuda._compiler_cache.",
               "cupy.cuda.compiler.", "cupy.cuda.nvrtc.", "cupy.cuda.texture.", "cupy.cuda.graph.",
               "cupy.cuda.function.", "cupy.cuda.cublas.", "cupy.cuda.cusolver.", "cupy.cuda.cusparse.",
               "cupy.cuda.curand.", "cupy.cuda.cufft.", "cupy.cuda.profiler.", "cupy_backends.cuda.",
               "cupyx.scipy.fftpack.get_fft_plan.")  # a cuFFT plan object


def has_gpu():
    """True when loom drives a GPU (CUDA, or HIP on a ROCm machine); False when its device is the host."""
    return bool(importlib.import_module("loom.cuda").is_available())


def _missing_message(path):
    """'module 'cupy.linalg' (loom) has no attribute 'det'' for a public name of a public cupy module,
    else 'loom has no <path>'."""
    parent, _, name = path.rpartition(".")
    if parent and not name.startswith("_") and _is_public_loom_module(parent):
        return f"module {parent!r} (loom) has no attribute {name!r}"
    return f"loom has no {path}"


def _is_public_loom_module(name):
    mod = sys.modules.get(name)
    return name == "cupy" or isinstance(mod, LoomProxy)


def _fail(path):
    if (path + ".").startswith(DEVICE_APIS) and not has_gpu():
        raise NeedsCudaDevice(f"needs a CUDA device: {path} (loom's device here is the host)")
    raise MissingInLoom(_missing_message(path))


class Missing:
    """Stands for the CuPy name `path` that loom lacks; using it raises MissingInLoom."""

    __slots__ = ("_path",)

    def __init__(self, path):
        object.__setattr__(self, "_path", path)

    def _use(self, *args, **kwargs):
        _fail(self._path)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Missing(f"{self._path}.{name}")

    __call__ = __bool__ = __iter__ = __len__ = __getitem__ = __index__ = __int__ = __float__ = _use
    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = __enter__ = _use
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = _use
    __hash__ = object.__hash__

    def __mro_entries__(self, bases):
        return (_missing_class(self._path),)

    def __repr__(self):
        return f"<missing in loom: {self._path}>"


def _missing_class(path):
    def __init__(self, *args, **kwargs):
        _fail(path)
    return type(path.rpartition(".")[2], (), {"__init__": __init__, "__module__": "cupy._shim"})


class MissingModule(types.ModuleType):
    """A stub for a CuPy module (or a name imported as one) that loom lacks (see the docstring)."""

    def __init__(self, name):
        super().__init__(name, f"stub: loom has no {name}")
        self.__path__ = []  # a package: its submodules are stubs too

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Missing(f"{self.__name__}.{name}")

    def __call__(self, *args, **kwargs):
        _fail(self.__name__)

    def __mro_entries__(self, bases):
        return (_missing_class(self.__name__),)


class LoomProxy(types.ModuleType):
    """cupy.X for a loom module loom.X: loom's public names; private and missing ones as described."""

    def __init__(self, name, target):
        super().__init__(name, getattr(target, "__doc__", None))
        self.__path__ = []
        self.__loom_module__ = target

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if not name.startswith("_"):
            try:
                return getattr(self.__loom_module__, name)
            except AttributeError:
                raise AttributeError(_missing_message(f"{self.__name__}.{name}")) from None
        return submodule(self.__name__, name)

    def __dir__(self):
        return [n for n in dir(self.__loom_module__) if not n.startswith("_")]


class _Loader(importlib.abc.Loader):
    def __init__(self, make):
        self.make = make

    def create_module(self, spec):
        return self.make(spec.name)

    def exec_module(self, module):
        pass


def _loom_target(fullname):
    """loom.X for a public cupy.X, when loom has that module; else None."""
    parts = fullname.split(".")
    if parts[0] != "cupy" or len(parts) < 2 or any(p.startswith("_") for p in parts[1:]):
        return None
    target = "loom." + ".".join(parts[1:])
    try:
        spec = importlib.util.find_spec(target)
    except (ImportError, AttributeError, ValueError):
        return None
    return target if spec is not None else None


class _RandomGenerator(types.ModuleType):
    """cupy.random._generator: CuPy's table of per-device RandomStates (_random_states), which
    cupy.testing's fix_random saves, checks that reset_states() replaced, and restores, is loom.random's;
    the module's public names (RandomState, get_random_state, reset_states, seed, ...) are loom.random's."""

    @property
    def _random_states(self):
        return importlib.import_module("loom.random")._states

    @_random_states.setter
    def _random_states(self, table):
        importlib.import_module("loom.random")._states = table

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        loom_random = importlib.import_module("loom.random")
        if not name.startswith("_") and hasattr(loom_random, name):
            return getattr(loom_random, name)
        return Missing(f"{self.__name__}.{name}")


class _LinalgUtil(types.ModuleType):
    """cupy.linalg._util: the helper CuPy's linalg tests call (stacked_identity), on loom's public API."""

    @staticmethod
    def stacked_identity(batch_shape, n, dtype):
        loom = importlib.import_module("loom")
        return loom.broadcast_to(loom.eye(n, dtype=dtype), tuple(batch_shape) + (n, n)).copy()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Missing(f"{self.__name__}.{name}")


class _RandomInternals(types.ModuleType):
    """cupy.random._distributions and cupy.random._bit_generator: CuPy's modules of the distribution
    functions (beta(a, b, size=None, dtype=float), ...) and bit generators (Philox4x3210, ...) that
    cupy.random re-exports: loom.random's objects of those names (the others are missing stubs)."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        loom_random = importlib.import_module("loom.random")
        if not name.startswith("_") and hasattr(loom_random, name):
            return getattr(loom_random, name)
        return Missing(f"{self.__name__}.{name}")


# shim modules that live inside a proxied loom package (cupy.random is loom.random's proxy)
_INSIDE_PROXIES = {"cupy.random._generator": _RandomGenerator, "cupy.random._distributions": _RandomInternals,
                   "cupy.random._bit_generator": _RandomInternals,
                   "cupy.linalg._util": _LinalgUtil}


class _Finder(importlib.abc.MetaPathFinder):
    """Runs after the regular finders: what the shim and the vendored CuPy lack."""

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in ROOTS:
            return None
        if fullname in _INSIDE_PROXIES:
            return importlib.machinery.ModuleSpec(fullname, _Loader(_INSIDE_PROXIES[fullname]))
        loom_name = _loom_target(fullname)
        if loom_name is not None:
            return importlib.machinery.ModuleSpec(
                fullname, _Loader(lambda n: LoomProxy(n, importlib.import_module(loom_name))), is_package=True)
        return importlib.machinery.ModuleSpec(fullname, _Loader(MissingModule), is_package=True)


class _TopLevelFinder(importlib.abc.MetaPathFinder):
    """Runs first, for the top-level names cupy, cupyx and cupy_backends only: they resolve in this shim's
    directory or to a stub, never to a CuPy installed beside loom (the GPU machine has one, whose
    cupy_backends would otherwise answer the tests' low-level CUDA calls instead of loom)."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in ROOTS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, [SHIM_DIR])
        return spec or importlib.machinery.ModuleSpec(fullname, _Loader(MissingModule), is_package=True)


SHIM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def install():
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
    if not any(isinstance(f, _TopLevelFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TopLevelFinder())


def submodule(package, name):
    """package.name as a module, imported through the finders (a stub when nothing provides it)."""
    return importlib.import_module(f"{package}.{name}")
