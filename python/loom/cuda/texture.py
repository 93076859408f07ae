"""loom.cuda.texture: CUDA arrays and texture / surface objects (CuPy's cupy.cuda.texture API).

Approach: the objects are the CUDA driver's (cuArray3DCreate, cuMemcpy3D, cuTexObjectCreate, cuSurfObjectCreate,
called through ctypes on libcuda.so.1, as loom.cuda.runtime's device queries are); the descriptors are plain
host values, built and read anywhere. A TextureObject or SurfaceObject passed to a raw kernel
(RawKernel / compile_with_cache's functions) is its 64-bit handle, the kernel's cudaTextureObject_t /
cudaSurfaceObject_t parameter; in CUDA C++ compiled by clang-19 tex1D/tex2D/tex3D/tex1Dfetch<T> come from
loom's prelude (runtime/cuda/cuda_texture.c), under NVRTC from CUDA's headers.

Contract. The enum values are the CUDA runtime's (loom.cuda.runtime / cupy.cuda.runtime): channel kinds
Signed 0, Unsigned 1, Float 2; resource types Array 0, MipmappedArray 1, Linear 2, Pitch2D 3; address modes
Wrap 0, Clamp 1, Mirror 2, Border 3; filter modes Point 0, Linear 1; read modes ElementType 0,
NormalizedFloat 1. Channels: 1, 2 or 4 of the same width (8, 16 or 32 bits; float: 16 or 32). CUDAarray
copy_from / copy_to take a loom (or CUDA Array Interface) array or a NumPy array, C-contiguous, of the
array's total bytes (width * height * depth elements of the channel format) and an element size that is
the channel's; the copy is complete when they return. Everything that creates a device object raises
CUDARuntimeError (status cudaErrorNoDevice) saying it needs a CUDA device where loom runs on the host or
on AMD GPUs.
"""
import ctypes

from .device import CUDARuntimeError, _driver, _ensure_context, get_device_id

cudaChannelFormatKindSigned, cudaChannelFormatKindUnsigned, cudaChannelFormatKindFloat = 0, 1, 2
cudaResourceTypeArray, cudaResourceTypeMipmappedArray, cudaResourceTypeLinear, cudaResourceTypePitch2D = range(4)
cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror, cudaAddressModeBorder = range(4)
cudaFilterModePoint, cudaFilterModeLinear = range(2)
cudaReadModeElementType, cudaReadModeNormalizedFloat = range(2)
_NO_DEVICE = 100  # cudaErrorNoDevice
_INVALID_VALUE = 1  # cudaErrorInvalidValue

# CUarray_format by (channel kind, bits)
_FORMATS = {(cudaChannelFormatKindUnsigned, 8): 0x01, (cudaChannelFormatKindUnsigned, 16): 0x02,
            (cudaChannelFormatKindUnsigned, 32): 0x03, (cudaChannelFormatKindSigned, 8): 0x08,
            (cudaChannelFormatKindSigned, 16): 0x09, (cudaChannelFormatKindSigned, 32): 0x0A,
            (cudaChannelFormatKindFloat, 16): 0x10, (cudaChannelFormatKindFloat, 32): 0x20}


class _Array3DDesc(ctypes.Structure):  # CUDA_ARRAY3D_DESCRIPTOR
    _fields_ = [("Width", ctypes.c_size_t), ("Height", ctypes.c_size_t), ("Depth", ctypes.c_size_t),
                ("Format", ctypes.c_int), ("NumChannels", ctypes.c_uint), ("Flags", ctypes.c_uint)]


class _Memcpy3D(ctypes.Structure):  # CUDA_MEMCPY3D
    _fields_ = [(side + f, t) for side in ("src", "dst") for f, t in
                (("XInBytes", ctypes.c_size_t), ("Y", ctypes.c_size_t), ("Z", ctypes.c_size_t),
                 ("LOD", ctypes.c_size_t), ("MemoryType", ctypes.c_int), ("Host", ctypes.c_void_p),
                 ("Device", ctypes.c_uint64), ("Array", ctypes.c_void_p), ("reserved", ctypes.c_void_p),
                 ("Pitch", ctypes.c_size_t), ("Height", ctypes.c_size_t))]
    _fields_ += [("WidthInBytes", ctypes.c_size_t), ("Height", ctypes.c_size_t), ("Depth", ctypes.c_size_t)]


class _ResourceDesc(ctypes.Structure):  # CUDA_RESOURCE_DESC: resType, a 128-byte union, flags
    _fields_ = [("resType", ctypes.c_int), ("res", ctypes.c_uint64 * 16), ("flags", ctypes.c_uint)]


class _TextureDesc(ctypes.Structure):  # CUDA_TEXTURE_DESC
    _fields_ = [("addressMode", ctypes.c_int * 3), ("filterMode", ctypes.c_int), ("flags", ctypes.c_uint),
                ("maxAnisotropy", ctypes.c_uint), ("mipmapFilterMode", ctypes.c_int),
                ("mipmapLevelBias", ctypes.c_float), ("minMipmapLevelClamp", ctypes.c_float),
                ("maxMipmapLevelClamp", ctypes.c_float), ("borderColor", ctypes.c_float * 4),
                ("reserved", ctypes.c_int * 12)]


_TRSF_READ_AS_INTEGER, _TRSF_NORMALIZED_COORDINATES, _TRSF_SRGB = 0x01, 0x02, 0x10
_MEM_HOST, _MEM_DEVICE, _MEM_ARRAY = 1, 2, 3


def _cuda(what):
    """The CUDA driver with the current device's context current; CUDARuntimeError where there is none."""
    from . import is_available
    from .device import _CUDA, _gpu_kind
    lib = _driver() if is_available() and _gpu_kind() == _CUDA else None
    if lib is None:
        raise CUDARuntimeError(f"loom.cuda.texture.{what} needs a CUDA device (texture memory and texture objects "
                               "are the CUDA driver's); loom's device here is not one", _NO_DEVICE)
    _ensure_context(lib, get_device_id())
    return lib


def _check(r, call):
    if r != 0:
        raise CUDARuntimeError(f"{call} failed (CUresult {r})", r)


class ChannelFormatDescriptor:
    """ChannelFormatDescriptor(x, y, z, w, f): the bits of each channel (0: absent) and their kind f
    (cudaChannelFormatKindSigned / Unsigned / Float)."""

    def __init__(self, x, y, z, w, f):
        self.x, self.y, self.z, self.w, self.f = int(x), int(y), int(z), int(w), int(f)
        bits = [b for b in (self.x, self.y, self.z, self.w) if b]
        if not bits or len(set(bits)) != 1 or len(bits) == 3 or (self.f, bits[0]) not in _FORMATS:
            raise ValueError(f"ChannelFormatDescriptor({x}, {y}, {z}, {w}, {f}): give 1, 2 or 4 channels of one width "
                             "(8, 16 or 32 bits; float 16 or 32) and a kind Signed 0, Unsigned 1 or Float 2")
        self._format, self._channels, self._bytes = _FORMATS[(self.f, bits[0])], len(bits), bits[0] // 8

    def get_channel_format(self):
        return {"x": self.x, "y": self.y, "z": self.z, "w": self.w, "f": self.f}

    @property
    def _element_bytes(self):
        return self._channels * self._bytes


class CUDAarray:
    """CUDAarray(desc, width, height=0, depth=0, flags=0): a CUDA array of width x height x depth elements
    (height 0: 1-D; depth 0: 2-D) of the channel format desc; copy_from / copy_to fill and read it."""

    def __init__(self, desc, width, height=0, depth=0, flags=0):
        if not isinstance(desc, ChannelFormatDescriptor):
            raise TypeError("CUDAarray: desc must be a ChannelFormatDescriptor")
        width, height, depth, flags = int(width), int(height), int(depth), int(flags)
        if width < 1 or height < 0 or depth < 0 or (depth and not height):
            raise ValueError(f"CUDAarray: bad extent (width {width}, height {height}, depth {depth})")
        self.desc, self.width, self.height, self.depth, self.flags = desc, width, height, depth, flags
        self.ptr = 0
        lib = _cuda("CUDAarray")
        d = _Array3DDesc(width, height, depth, desc._format, desc._channels, flags)
        h = ctypes.c_void_p()
        _check(lib.cuArray3DCreate_v2(ctypes.byref(h), ctypes.byref(d)), "cuArray3DCreate")
        self.ptr, self._lib = h.value or 0, lib

    @property
    def ndim(self):
        return 3 if self.depth else 2 if self.height else 1

    def __del__(self):
        if getattr(self, "ptr", 0):
            self._lib.cuArrayDestroy(ctypes.c_void_p(self.ptr))
            self.ptr = 0

    def _copy(self, arr, to_array, stream):
        import numpy
        n = self.width * max(self.height, 1) * max(self.depth, 1)
        if isinstance(arr, numpy.ndarray):
            if not arr.flags.c_contiguous:
                raise ValueError("CUDAarray copy: the NumPy array must be C-contiguous")
            kind, host, dev, nbytes, item = _MEM_HOST, arr.ctypes.data, 0, arr.nbytes, arr.itemsize
        else:
            cai = getattr(arr, "__cuda_array_interface__", None)
            if cai is None:
                raise TypeError(f"CUDAarray copy: expected a loom or NumPy array, got {type(arr).__name__}")
            if not (getattr(arr, "flags", None) is None or arr.flags.c_contiguous):
                raise ValueError("CUDAarray copy: the array must be C-contiguous")
            item = numpy.dtype(cai["typestr"]).itemsize
            nbytes = item
            for s in cai["shape"]:
                nbytes *= int(s)
            kind, host, dev = _MEM_DEVICE, None, int(cai["data"][0] or 0)
        elem = self.desc._element_bytes
        if nbytes != n * elem or elem % item:
            raise ValueError(f"CUDAarray copy: the array has {nbytes} bytes of {item}-byte elements; the CUDA array "
                             f"holds {n} elements of {elem} bytes ({n * elem} bytes)")
        from . import runtime
        lib = _cuda("CUDAarray.copy_from" if to_array else "CUDAarray.copy_to")
        runtime.deviceSynchronize()  # loom's pending work on the source (any stream) is done
        c = _Memcpy3D()
        side, other = ("src", "dst") if to_array else ("dst", "src")
        setattr(c, side + "MemoryType", kind)
        setattr(c, side + "Host", host)
        setattr(c, side + "Device", dev)
        setattr(c, side + "Pitch", self.width * elem)
        setattr(c, side + "Height", max(self.height, 1))
        setattr(c, other + "MemoryType", _MEM_ARRAY)
        setattr(c, other + "Array", self.ptr)
        c.WidthInBytes, c.Height, c.Depth = self.width * elem, max(self.height, 1), max(self.depth, 1)
        _check(lib.cuMemcpy3D_v2(ctypes.byref(c)), "cuMemcpy3D")
        _check(lib.cuCtxSynchronize(), "cuCtxSynchronize")

    def copy_from(self, in_arr, stream=None):
        """Fills the CUDA array from in_arr (loom / CUDA Array Interface or NumPy array)."""
        self._copy(in_arr, True, stream)

    def copy_to(self, out_arr, stream=None):
        """Writes the CUDA array's contents into out_arr."""
        self._copy(out_arr, False, stream)


class ResourceDescriptor:
    """ResourceDescriptor(restype, cuArr=None, arr=None, chDesc=None, sizeInBytes=0, width=0, height=0,
    pitchInBytes=0): what a texture reads: a CUDAarray (cudaResourceTypeArray), or device memory `arr` of
    channel format chDesc, linear (sizeInBytes) or pitched 2-D (width, height, pitchInBytes)."""

    def __init__(self, restype, cuArr=None, arr=None, chDesc=None, sizeInBytes=0, width=0, height=0, pitchInBytes=0):
        self.restype, self.cuArr, self.arr, self.chDesc = int(restype), cuArr, arr, chDesc
        self.sizeInBytes, self.width, self.height, self.pitchInBytes = (int(sizeInBytes), int(width), int(height),
                                                                        int(pitchInBytes))
        if self.restype == cudaResourceTypeArray:
            if not isinstance(cuArr, CUDAarray):
                raise TypeError("ResourceDescriptor: cudaResourceTypeArray needs cuArr, a CUDAarray")
        elif self.restype in (cudaResourceTypeLinear, cudaResourceTypePitch2D):
            if arr is None or not hasattr(arr, "__cuda_array_interface__") or \
                    not isinstance(chDesc, ChannelFormatDescriptor):
                raise TypeError("ResourceDescriptor: linear and pitch-2D resources need arr (a device array) and "
                                "chDesc (a ChannelFormatDescriptor)")
        else:
            raise ValueError(f"ResourceDescriptor: resource type {restype} is not supported (Array 0, Linear 2, "
                             "Pitch2D 3)")

    def get_resource_desc(self):
        d = {"resType": self.restype}
        if self.restype == cudaResourceTypeArray:
            d["array"] = {"hArray": self.cuArr.ptr}
        else:
            key = "linear" if self.restype == cudaResourceTypeLinear else "pitch2D"
            d[key] = {"devPtr": int(self.arr.__cuda_array_interface__["data"][0]),
                      "desc": self.chDesc.get_channel_format()}
            d[key].update({"sizeInBytes": self.sizeInBytes} if key == "linear" else
                          {"width": self.width, "height": self.height, "pitchInBytes": self.pitchInBytes})
        return d

    def _struct(self):
        r = _ResourceDesc()
        r.resType = self.restype
        if self.restype == cudaResourceTypeArray:
            r.res[0] = self.cuArr.ptr
            return r
        ptr = int(self.arr.__cuda_array_interface__["data"][0])
        fmt = self.chDesc._format | (self.chDesc._channels << 32)  # CUarray_format, then numChannels (4 + 4 bytes)
        extra = [self.sizeInBytes] if self.restype == cudaResourceTypeLinear else \
            [self.width, self.height, self.pitchInBytes]
        for i, v in enumerate([ptr, fmt] + extra):
            r.res[i] = v
        return r


class TextureDescriptor:
    """TextureDescriptor(addressModes=None, filterMode=0, readMode=0, sRGB=None, borderColors=None,
    normalizedCoords=None, maxAnisotropy=None): how a texture is sampled (addressModes: up to 3 modes, one
    per dimension)."""

    def __init__(self, addressModes=None, filterMode=cudaFilterModePoint, readMode=cudaReadModeElementType,
                 sRGB=None, borderColors=None, normalizedCoords=None, maxAnisotropy=None):
        modes = tuple(int(m) for m in (addressModes or ()))
        if len(modes) > 3 or any(m not in range(4) for m in modes):
            raise ValueError(f"TextureDescriptor: addressModes must be up to 3 of Wrap 0, Clamp 1, Mirror 2, Border 3, "
                             f"got {addressModes!r}")
        if int(filterMode) not in (0, 1) or int(readMode) not in (0, 1):
            raise ValueError("TextureDescriptor: filterMode is Point 0 or Linear 1, readMode ElementType 0 or "
                             "NormalizedFloat 1")
        colors = tuple(float(c) for c in (borderColors or ()))
        if len(colors) > 4:
            raise ValueError("TextureDescriptor: borderColors has at most 4 entries")
        self.addressModes, self.filterMode, self.readMode = modes, int(filterMode), int(readMode)
        self.sRGB, self.borderColors, self.normalizedCoords = sRGB, colors, normalizedCoords
        self.maxAnisotropy = maxAnisotropy

    def get_texture_desc(self):
        return {"addressMode": self.addressModes, "filterMode": self.filterMode, "readMode": self.readMode,
                "sRGB": bool(self.sRGB), "borderColor": self.borderColors,
                "normalizedCoords": bool(self.normalizedCoords), "maxAnisotropy": int(self.maxAnisotropy or 0)}

    def _struct(self):
        t = _TextureDesc()
        for i, m in enumerate(self.addressModes):
            t.addressMode[i] = m
        t.filterMode = self.filterMode
        t.flags = ((_TRSF_READ_AS_INTEGER if self.readMode == cudaReadModeElementType else 0)
                   | (_TRSF_NORMALIZED_COORDINATES if self.normalizedCoords else 0) | (_TRSF_SRGB if self.sRGB else 0))
        t.maxAnisotropy = int(self.maxAnisotropy or 0)
        for i, c in enumerate(self.borderColors):
            t.borderColor[i] = c
        return t


class _DriverObject:
    """A driver object a kernel receives as its 64-bit handle (ptr), destroyed with the driver's
    `_destroy` call when collected."""
    _destroy = ""

    def _loom_kernel_handle(self):
        return self.ptr

    def __del__(self):
        if getattr(self, "ptr", 0):
            getattr(self._lib, self._destroy)(ctypes.c_uint64(self.ptr))
            self.ptr = 0


class TextureObject(_DriverObject):
    """TextureObject(ResDesc, TexDesc): a texture object (cuTexObjectCreate); ptr is its handle, which a raw
    kernel's cudaTextureObject_t parameter receives. The resource is kept alive with it."""

    def __init__(self, ResDesc, TexDesc):
        if not isinstance(ResDesc, ResourceDescriptor) or not isinstance(TexDesc, TextureDescriptor):
            raise TypeError("TextureObject(ResDesc: ResourceDescriptor, TexDesc: TextureDescriptor)")
        self.ResDesc, self.TexDesc, self.ptr = ResDesc, TexDesc, 0
        lib = _cuda("TextureObject")
        h = ctypes.c_uint64()
        r, t = ResDesc._struct(), TexDesc._struct()
        _check(lib.cuTexObjectCreate(ctypes.byref(h), ctypes.byref(r), ctypes.byref(t), None), "cuTexObjectCreate")
        self.ptr, self._lib = h.value, lib

    _destroy = "cuTexObjectDestroy"


class SurfaceObject(_DriverObject):
    """SurfaceObject(ResDesc): a surface object (cuSurfObjectCreate) of a CUDAarray resource (created with
    the surface load/store flag, 2); ptr is the cudaSurfaceObject_t handle a raw kernel receives."""

    def __init__(self, ResDesc):
        if not isinstance(ResDesc, ResourceDescriptor) or ResDesc.restype != cudaResourceTypeArray:
            raise TypeError("SurfaceObject(ResDesc): a ResourceDescriptor of a CUDAarray")
        self.ResDesc, self.ptr = ResDesc, 0
        lib = _cuda("SurfaceObject")
        h = ctypes.c_uint64()
        r = ResDesc._struct()
        _check(lib.cuSurfObjectCreate(ctypes.byref(h), ctypes.byref(r)), "cuSurfObjectCreate")
        self.ptr, self._lib = h.value, lib

    _destroy = "cuSurfObjectDestroy"


def _register_handles():
    from .. import _raw
    _raw._HANDLE_TYPES.update((TextureObject, SurfaceObject))


_register_handles()
