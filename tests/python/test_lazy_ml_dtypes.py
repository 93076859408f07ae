"""ml_dtypes (bfloat16) is imported on first use, not by `import loom` (it costs ~1 s, most of the import):
each first contact with bfloat16 in a fresh interpreter still works and agrees with ml_dtypes/NumPy."""
import subprocess
import sys

import pytest

pytest.importorskip("ml_dtypes")


def _run(code):
    r = subprocess.run([sys.executable, "-c", "import loom, sys, numpy\n" + code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_import_does_not_load_ml_dtypes():
    assert _run("print('ml_dtypes' in sys.modules); print(loom.zeros(2).dtype)").split() == ["False", "float64"]


@pytest.mark.parametrize("first", [
    "a = loom.asarray([1.5, -2.25, 3.0], dtype='bfloat16')",
    "a = loom.asarray([1.5, -2.25, 3.0]).astype('bfloat16')",
    "a = loom.asarray([1.5, -2.25, 3.0], dtype=loom.bfloat16)",
    "import ml_dtypes\na = loom.asarray(numpy.array([1.5, -2.25, 3.0], dtype=ml_dtypes.bfloat16))",
])
def test_first_contact_with_bfloat16(first):
    out = _run(first + """
import ml_dtypes
bf = numpy.dtype(ml_dtypes.bfloat16)
assert a.dtype == bf, a.dtype
h = loom.asnumpy(a * 3 + 1)
want = (numpy.array([1.5, -2.25, 3.0], dtype=bf).astype(numpy.float32) * 3 + 1).astype(bf)
assert h.dtype == bf and (h.astype(numpy.float64) == want.astype(numpy.float64)).all(), (h, want)
assert loom.isdtype('bfloat16', 'real floating') and not loom.isdtype('bfloat16', 'integral')
assert loom.result_type('bfloat16', 'bfloat16') == bf
assert float(loom.finfo('bfloat16').eps) == float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps)
print('ok')
""")
    assert out.split()[-1] == "ok"


def test_unknown_dtype_name_still_a_clear_error():
    out = _run("""
try:
    loom.zeros(2, dtype='bfloat17')
except TypeError as e:
    print('TypeError', 'bfloat17' in str(e))
""")
    assert out.split() == ["TypeError", "True"]
