"""Input and output of NumPy and CuPy: text formatting of arrays and numbers, .npy/.npz files, text files,
arrays from buffers, strings, files and iterators.

Approach. These are host work by nature (a file, a string, a Python buffer), as in CuPy: an array to
write or format is copied to the host (`get()`) and handed to NumPy's routine of the same name; what is
read is built by NumPy on the host and becomes a loom array on the current device (asarray). The
scalar formatters (binary_repr, base_repr, format_float_*) and the print options are NumPy's own: loom
prints arrays through NumPy.
"""
import numpy as _numpy
from numpy import (base_repr, binary_repr, format_float_positional, format_float_scientific,  # noqa: F401
                   get_printoptions, printoptions, set_printoptions)

from ._creation import asarray

__all__ = ["array_repr", "array_str", "array2string", "base_repr", "binary_repr", "format_float_positional",
           "format_float_scientific", "get_printoptions", "printoptions", "set_printoptions", "save", "savez",
           "savez_compressed", "load", "savetxt", "loadtxt", "genfromtxt", "frombuffer", "fromfile",
           "fromiter", "fromstring"]


def _host(a):
    """a as a NumPy array (a loom array copied to the host; anything else as NumPy reads it)."""
    from ._ndarray import ndarray
    return a.get() if isinstance(a, ndarray) else a


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's array_repr of the array's values ('array([...])')."""
    return _numpy.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """NumPy's array_str of the array's values."""
    return _numpy.array_str(_host(a), max_line_width, precision, suppress_small)


def array2string(a, *args, **kwargs):
    """NumPy's array2string of the array's values (every option of NumPy's)."""
    return _numpy.array2string(_host(a), *args, **kwargs)


def save(file, arr, allow_pickle=True, **kwargs):
    """Writes arr to a .npy file (NumPy's format), through a host copy."""
    _numpy.save(file, _host(arr), allow_pickle=allow_pickle, **kwargs)


def savez(file, *args, **kwds):
    """Writes arrays to an uncompressed .npz file (NumPy's), through host copies."""
    _numpy.savez(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file, *args, **kwds):
    """Writes arrays to a compressed .npz file (NumPy's), through host copies."""
    _numpy.savez_compressed(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


class NpzFile:
    """The arrays of an .npz file (CuPy's cupy.lib.npyio.NpzFile): f[name] is a loom array; a context
    manager that closes the file."""

    def __init__(self, npz_file):
        self.npz_file = npz_file

    def __enter__(self):
        self.npz_file.__enter__()
        return self

    def __exit__(self, typ, val, traceback):
        self.npz_file.__exit__(typ, val, traceback)

    def __getitem__(self, key):
        return asarray(self.npz_file[key])

    def __contains__(self, key):
        return key in self.npz_file

    def __iter__(self):
        return iter(self.npz_file)

    def __len__(self):
        return len(self.npz_file)

    @property
    def files(self):
        return self.npz_file.files

    def close(self):
        self.npz_file.close()


def load(file, mmap_mode=None, allow_pickle=False):
    """Reads a .npy file as a loom array, or an .npz file as an NpzFile of loom arrays (NumPy's reader).
    An object array needs allow_pickle=True and stays a NumPy array (loom has no object dtype)."""
    obj = _numpy.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle)  # a pickle (ndarray.dump) as is
    if isinstance(obj, _numpy.ndarray):
        return obj if obj.dtype == object else asarray(obj)
    if isinstance(obj, _numpy.lib.npyio.NpzFile):
        return NpzFile(obj)
    return obj


def savetxt(fname, X, *args, **kwargs):
    """Writes a 1-d or 2-d array to a text file (NumPy's savetxt, every option), through a host copy."""
    _numpy.savetxt(fname, _host(X), *args, **kwargs)


def loadtxt(*args, **kwargs):
    """Reads a text file with NumPy's loadtxt (every option) into a loom array."""
    return asarray(_numpy.loadtxt(*args, **kwargs))


def genfromtxt(*args, **kwargs):
    """Reads a text file with NumPy's genfromtxt (every option) into a loom array."""
    return asarray(_numpy.genfromtxt(*args, **kwargs))


def frombuffer(*args, **kwargs):
    """A loom array of the values in a Python buffer (NumPy's frombuffer; the result is a copy)."""
    return asarray(_numpy.frombuffer(*args, **kwargs))


def fromfile(*args, **kwargs):
    """A loom array of the values in a binary or text file (NumPy's fromfile)."""
    return asarray(_numpy.fromfile(*args, **kwargs))


def fromiter(*args, **kwargs):
    """A loom array of the values an iterable yields (NumPy's fromiter)."""
    return asarray(_numpy.fromiter(*args, **kwargs))


def fromstring(*args, **kwargs):
    """A loom array of the numbers in a string (NumPy's fromstring with sep)."""
    return asarray(_numpy.fromstring(*args, **kwargs))
