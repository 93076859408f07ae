"""cupy.cuda.runtime: loom.cuda.runtime plus the constants of the CUDA runtime API that CuPy exposes
(values from the CUDA runtime headers). Any other name is a stub that raises MissingInLoom."""
import loom.cuda as _cuda

from .. import _shim

is_hip = False
# cudaStream_t special handles
streamLegacy = 1
streamPerThread = 2
# cudaMemcpyKind
memcpyHostToHost, memcpyHostToDevice, memcpyDeviceToHost, memcpyDeviceToDevice, memcpyDefault = range(5)
# texture enums (cudaTextureAddressMode, cudaTextureFilterMode, cudaTextureReadMode, cudaResourceType,
# cudaChannelFormatKind)
cudaAddressModeWrap, cudaAddressModeClamp, cudaAddressModeMirror, cudaAddressModeBorder = range(4)
cudaFilterModePoint, cudaFilterModeLinear = range(2)
cudaReadModeElementType, cudaReadModeNormalizedFloat = range(2)
cudaResourceTypeArray, cudaResourceTypeMipmappedArray, cudaResourceTypeLinear, cudaResourceTypePitch2D = range(4)
(cudaChannelFormatKindSigned, cudaChannelFormatKindUnsigned, cudaChannelFormatKindFloat,
 cudaChannelFormatKindNone) = range(4)
CUDARuntimeError = _cuda.CUDARuntimeError


def driverGetVersion():
    """The CUDA driver's version (e.g. 12040), 0 without a driver (the host): tests that need a given
    CUDA version skip there."""
    import ctypes
    lib = _cuda._driver()
    v = ctypes.c_int(0)
    if lib is None or lib.cuDriverGetVersion(ctypes.byref(v)) != 0:
        return 0
    return v.value


# loom has no CUDA runtime library: the driver's version stands for it
runtimeGetVersion = driverGetVersion


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_cuda.runtime, name)
    except AttributeError:
        return _shim.Missing(f"cupy.cuda.runtime.{name}")
