"""loom.cuda.runtime.deviceGetAttribute / deviceCanAccessPeer (CuPy's cupy.cuda.runtime): the driver's
cuDeviceGetAttribute / cuDeviceCanAccessPeer. Checked against a stand-in driver that answers from a table
(the mapping, argument checks and errors), without a device (the error), and on a GPU against the facts
loom already reads (compute capability)."""
import pytest

import loom
from loom import cuda
from loom.cuda import runtime as rt

# cuda.h's CUdevice_attribute values, written out independently of runtime.py's table
KNOWN = {"cudaDevAttrMaxThreadsPerBlock": 1, "cudaDevAttrWarpSize": 10, "cudaDevAttrMultiProcessorCount": 16,
         "cudaDevAttrComputeCapabilityMajor": 75, "cudaDevAttrComputeCapabilityMinor": 76,
         "cudaDevAttrCooperativeLaunch": 95, "cudaDevAttrMaxSharedMemoryPerBlockOptin": 97}


class FakeDriver:
    """cuDeviceGet / cuDeviceGetAttribute / cuDeviceCanAccessPeer of two devices; unknown codes: status 1."""
    table = {(0, 1): 1024, (0, 10): 32, (0, 75): 9, (0, 76): 0, (0, 95): 1, (1, 75): 8, (1, 95): 0}

    def cuDeviceGet(self, out, ordinal):
        out._obj.value = 100 + ordinal  # a CUdevice handle that is not the ordinal
        return 0

    def cuDeviceGetAttribute(self, out, code, dev):
        v = self.table.get((dev.value - 100, code))
        if v is None:
            return 1  # CUDA_ERROR_INVALID_VALUE
        out._obj.value = v
        return 0

    def cuDeviceCanAccessPeer(self, out, dev, peer):
        out._obj.value = 1 if {dev.value, peer.value} == {100, 101} else 0
        return 0


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(rt, "_gpu_kind", lambda: rt._CUDA)
    monkeypatch.setattr(rt, "_gpu_count", lambda: 2)
    monkeypatch.setattr(rt, "_driver", lambda: FakeDriver())


def test_constants_are_the_drivers():
    for name, value in KNOWN.items():
        assert getattr(rt, name) == value


def test_device_get_attribute_through_the_driver(fake):
    assert rt.deviceGetAttribute(rt.cudaDevAttrCooperativeLaunch, 0) == 1
    assert rt.deviceGetAttribute(rt.cudaDevAttrCooperativeLaunch, 1) == 0
    assert rt.deviceGetAttribute(rt.cudaDevAttrComputeCapabilityMajor, 1) == 8
    assert rt.deviceGetAttribute(rt.cudaDevAttrWarpSize, 0) == 32
    with pytest.raises(cuda.CUDARuntimeError, match="does not know device attribute 12345") as e:
        rt.deviceGetAttribute(12345, 0)
    assert e.value.status == rt.errorInvalidValue
    with pytest.raises(cuda.CUDARuntimeError, match="device 2 does not exist") as e:
        rt.deviceGetAttribute(rt.cudaDevAttrWarpSize, 2)
    assert e.value.status == rt.errorInvalidDevice
    with pytest.raises(TypeError, match="attrib must be an int"):
        rt.deviceGetAttribute("warpSize", 0)


def test_device_can_access_peer(fake):
    assert rt.deviceCanAccessPeer(0, 1) == 1 and rt.deviceCanAccessPeer(1, 0) == 1
    assert rt.deviceCanAccessPeer(0, 0) == 0  # a device and itself, as cudaDeviceCanAccessPeer
    with pytest.raises(cuda.CUDARuntimeError, match="does not exist"):
        rt.deviceCanAccessPeer(0, 5)


@pytest.mark.skipif(cuda.is_available(), reason="host only")
def test_without_a_device():
    for call in (lambda: rt.deviceGetAttribute(rt.cudaDevAttrWarpSize, 0), lambda: rt.deviceCanAccessPeer(0, 1)):
        with pytest.raises(cuda.CUDARuntimeError, match="no CUDA device") as e:
            call()
        assert e.value.status == rt.errorNoDevice


@pytest.mark.skipif(not cuda.is_available() or rt.is_hip, reason="needs a CUDA device")
def test_on_the_gpu():
    cc = cuda.Device(0).compute_capability
    assert rt.deviceGetAttribute(rt.cudaDevAttrComputeCapabilityMajor, 0) == int(cc[:-1])
    assert rt.deviceGetAttribute(rt.cudaDevAttrComputeCapabilityMinor, 0) == int(cc[-1])
    assert rt.deviceGetAttribute(rt.cudaDevAttrWarpSize, 0) == rt.getDeviceProperties(0)["warpSize"] == 32
    assert rt.deviceGetAttribute(rt.cudaDevAttrCooperativeLaunch, 0) in (0, 1)
    assert loom.cuda.runtime.deviceCanAccessPeer(0, 0) == 0


# ---- the CUDA Array Interface's export version and stream entry -------------------------------------------
def test_cuda_array_interface_version_setting(monkeypatch):
    assert loom.config.cuda_array_interface_version == 3
    monkeypatch.setenv("LOOM_CUDA_ARRAY_INTERFACE_EXPORT_VERSION", "2")
    assert loom.config.cuda_array_interface_version == 2
    monkeypatch.setenv("LOOM_CUDA_ARRAY_INTERFACE_EXPORT_VERSION", "7")
    with pytest.raises(ValueError, match="give 2 or 3"):
        loom.config.cuda_array_interface_version
    monkeypatch.delenv("LOOM_CUDA_ARRAY_INTERFACE_EXPORT_VERSION")
    try:
        loom.config.cuda_array_interface_version = 2
        assert loom.config.cuda_array_interface_version == 2
        for bad in (1, 4, True, "3"):
            with pytest.raises(ValueError, match="give 2 or 3"):
                loom.config.cuda_array_interface_version = bad
    finally:
        loom.config.cuda_array_interface_version = None
    assert loom.config.cuda_array_interface_version == 3


@pytest.mark.skipif(not cuda.is_available(), reason="needs a GPU")
def test_cuda_array_interface_stream_entry():
    a = loom.zeros(10)
    cai = a.__cuda_array_interface__
    assert cai["version"] == 3 and cai["stream"] == 1  # the legacy default stream, work synchronized
    with cuda.Stream.ptds:
        assert a.__cuda_array_interface__["stream"] == 2
    s = cuda.Stream()
    with s:
        assert a.__cuda_array_interface__["stream"] == s.ptr != 0
    try:
        loom.config.cuda_array_interface_version = 2
        cai = a.__cuda_array_interface__
        assert cai["version"] == 2 and "stream" not in cai
    finally:
        loom.config.cuda_array_interface_version = None
