"""The MLP training step of bench/mlp_array_api.py (written once against the array API: forward, hand-written
backward, SGD) on loom against the same text run by NumPy in float64 (issue 15's "done when"). On a GPU the
steps must not copy anything back to the host (loom.stats()'s copies_to_host between the upload and the
losses' read-back)."""
import importlib.util
import os

import numpy as np
import pytest

import loom

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "mlp_array_api.py")
_spec = importlib.util.spec_from_file_location("mlp_array_api", _PATH)
assert _spec is not None and _spec.loader is not None
mlp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mlp)

GPU = loom.cuda.is_available()
DEVICES = [loom.cpu] + ([loom.cuda.Device(0)] if GPU else [])


@pytest.mark.parametrize("device", DEVICES, ids=str)
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-11), (np.float32, 2e-5)])
@pytest.mark.parametrize("dims", [(64, 20, 32, 3), (7, 5, 1, 1)])  # batch, in, hidden, out (a width-1 layer too)
def test_mlp_steps_match_numpy(device, dtype, rtol, dims):
    data = mlp.initial(*dims, dtype, seed=1)
    ref, _, _ = mlp.train(np.asarray, lambda p: None, tuple(
        tuple(v.astype(np.float64) for v in d) if isinstance(d, tuple) else d.astype(np.float64) for d in data),
        4, 0.05)

    def sync(params):
        loom.eval(*params)

    got, _, (s0, s1) = mlp.train(lambda a: loom.asarray(a, device=device), sync, data, 4, 0.05, 0, loom.stats)
    np.testing.assert_allclose(got, ref, rtol=rtol)
    assert ref[-1] < ref[0]  # it trains
    if device is not loom.cpu:
        assert s1["copies_to_host"] == s0["copies_to_host"], "a step read something back to the host"
        if min(dims[1:]) > 1:  # the products are library calls on the device (a width-1 layer's are
            assert s1["library_calls"] > s0["library_calls"]  # fused row sums: matrix-vector products)


def test_step_is_array_api_only():
    """The step sees only its arrays' namespace: it runs on loom arrays without loom being named."""
    import inspect
    src = inspect.getsource(mlp.mlp_step)
    assert "loom" not in src and "np." not in src and "numpy" not in src
