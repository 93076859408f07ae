# SPDX-License-Identifier: Apache-2.0
"""Inner reductions with several REDUCE phases over few long rows (np.var / np.std of a vector, statistics
of a few long series, an argmax of centred values) run split along R on the host: each phase's parts in
parallel, then their combination in order (codegen/lower_host_outer.c cg_host_row_part; the launcher's
CG_COL_ROWS plan). Values against NumPy in float64, the same bits with one thread or two (the parts
depend on the sizes only), NaN / inf, ties of an argmax across part boundaries, and shapes around the
split's thresholds."""
import numpy as np
import pytest

import loom


@pytest.fixture
def threads():
    old = loom.config.num_threads
    yield
    loom.config.num_threads = old


def _both_thread_counts(fn):
    outs = []
    for n in (1, 2):
        loom.config.num_threads = n
        outs.append(fn())
    return outs


@pytest.mark.parametrize("n", [1000, 32768, 32769, 100003, 1 << 20])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_var_std_of_a_vector(threads, n, dtype):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 3 + 1e3).astype(dtype)
    lx = loom.asarray(x)
    a, b = _both_thread_counts(lambda: loom.asnumpy(loom.var(lx)))
    assert a.tobytes() == b.tobytes()
    ref = np.var(x.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert abs(float(a) - ref) <= tol * ref
    s = float(loom.asnumpy(loom.std(lx, ddof=1)))
    assert abs(s - np.std(x.astype(np.float64), ddof=1)) <= tol * s


@pytest.mark.parametrize("shape", [(2, 300001), (3, 1 << 18), (5, 40000)])
def test_statistics_of_few_long_rows(threads, shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape) * np.arange(1, shape[0] + 1)[:, None]
    lx = loom.asarray(x)
    v1, v2 = _both_thread_counts(lambda: loom.asnumpy(loom.var(lx, axis=-1)))
    assert v1.tobytes() == v2.tobytes()
    np.testing.assert_allclose(v1, np.var(x, axis=-1), rtol=1e-12)
    z = loom.asnumpy((lx - lx.mean(axis=1, keepdims=True)).max(axis=1))  # centred maximum: 2 REDUCE phases
    np.testing.assert_allclose(z, (x - x.mean(axis=1, keepdims=True)).max(axis=1), rtol=1e-12)
    t = x[:, ::3]                                                        # strided rows
    np.testing.assert_allclose(loom.asnumpy(loom.var(lx[:, ::3], axis=1)), np.var(t, axis=1), rtol=1e-12)


def test_argmax_of_centred_values_first_tie_across_parts(threads):
    n = 200000
    x = np.zeros(n)
    x[[5, 70000, 150000]] = 7.0            # ties in different parts: the first index wins
    lx = loom.asarray(x)
    i1, i2 = _both_thread_counts(lambda: int(loom.asnumpy(loom.argmax(lx - lx.mean()))))
    assert i1 == i2 == 5
    y = -np.arange(n, dtype=np.float64)
    ly = loom.asarray(y)
    assert int(loom.asnumpy(loom.argmin(ly - ly.mean()))) == n - 1


def test_nan_inf_and_integers(threads):
    x = np.random.default_rng(2).standard_normal(300000)
    x[123456] = np.nan
    assert np.isnan(float(loom.asnumpy(loom.var(loom.asarray(x)))))
    y = np.ones(300000)
    y[200000] = np.inf
    assert np.isnan(float(loom.asnumpy(loom.var(loom.asarray(y)))))   # inf - inf, as NumPy
    i = np.arange(300000, dtype=np.int64) % 1000
    got = float(loom.asnumpy(loom.var(loom.asarray(i))))
    assert abs(got - np.var(i)) <= 1e-12 * np.var(i)
    e = loom.asnumpy(loom.var(loom.asarray(np.zeros((3, 0)), ), axis=0))
    assert e.shape == (0,)


def test_the_split_entries_exist_for_inner_multi_phase_kernels():
    x = loom.asarray(np.zeros(1 << 16))
    ir = loom.inspect(lambda: loom.var(x), what="llvm")["llvm"]
    assert "_colpart(" in ir and "_colfinish(" in ir       # np.var of a vector: the R split's entries
    y = loom.asarray(np.zeros((64, 64)))
    ir = loom.inspect(lambda: y - y.max(axis=1, keepdims=True), what="llvm")["llvm"]
    assert "_colpart(" not in ir                           # a MAP phase: per O point
