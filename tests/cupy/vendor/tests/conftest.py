from __future__ import annotations

import collections
import os
import subprocess
import sys
import random

import pytest

# enable NEP 50 weak promotion rules
import numpy
if numpy.lib.NumpyVersion(numpy.__version__) < "2.0.0":
    numpy._set_promotion_state("weak")

# Enable `testdir` fixture to test `cupy.testing`.
# `pytest_plugins` cannot be locally configured. See also
# https://docs.pytest.org/en/stable/deprecations.html#pytest-plugins-in-non-top-level-conftest-files
pytest_plugins = ['pytester']


def _is_pip_installed():
    try:
        import pip  # NOQA
        return True
    except ImportError:
        return False


def _is_in_ci():
    ci_name = os.environ.get('CUPY_CI', '')
    return ci_name != ''


def pytest_configure(config):
    # Print installed packages
    if _is_in_ci() and _is_pip_installed():
        print("***** Installed packages *****", flush=True)
        subprocess.check_call([sys.executable, '-m', 'pip', 'freeze', '--all'])

    if config.pluginmanager.hasplugin("xdist"):
        n_gpu = os.environ.get('CUPY_TEST_GPU_LIMIT')
        worker_id = os.environ.get('PYTEST_XDIST_WORKER', 'master')

        if n_gpu is None:
            if worker_id == 'master':
                print('\nTIP: when using pytest-xdist, you can automatically '
                      'rotate CUDA_VISIBLE_DEVICES for each test worker by '
                      'setting CUPY_TEST_GPU_LIMIT environment variable.\n')
        else:
            # We'll edit the environment variable `CUDA_VISIBLE_DEVICES` for
            # each worker which needs to happen before the CUDA init.
            n_gpu = int(n_gpu)

            devices = os.environ.get('CUDA_VISIBLE_DEVICES')
            if devices is None:
                devices = [str(k) for k in range(n_gpu)]
            else:
                devices = devices.split(',')[:n_gpu]

            if worker_id == 'master':
                print(f'\nNOTE: Setting workers to use a shifted version of:'
                      f'\n    CUDA_VISIBLE_DEVICES={",".join(devices)}\n')
            else:
                assert worker_id.startswith('gw')
                w = int(worker_id[2:])

                devices = collections.deque(devices)
                # left rotate so second worker gets second GPU
                devices.rotate(-w)
                devices = ','.join(devices)
                os.environ['CUDA_VISIBLE_DEVICES'] = devices


if int(os.environ.get('CUPY_ENABLE_UMP', 0)) != 0:
    # Make sure malloc is used in a stream-ordered fashion
    import cupy as cp
    cp.cuda.set_allocator(cp.cuda.MemoryPool(
        cp.cuda.memory.malloc_system).malloc)

    import cupy._core.numpy_allocator as ac
    import numpy_allocator
    import ctypes
    lib = ctypes.CDLL(ac.__file__)

    class my_allocator(metaclass=numpy_allocator.type):
        _calloc_ = ctypes.addressof(lib._calloc)
        _malloc_ = ctypes.addressof(lib._malloc)
        _realloc_ = ctypes.addressof(lib._realloc)
        _free_ = ctypes.addressof(lib._free)
    my_allocator.__enter__()


if int(os.environ.get('CUPY_CI_ENABLE_GCP_KERNEL_CACHE', 0)) != 0:
    from cupy.cuda.compiler import _set_kernel_cache_backend
    from cupy_tests._gcp_kernel_cache_backend import GCPStorageCacheBackend

    backend = GCPStorageCacheBackend(
        bucket_name='tmp-asia-pfn-public-ci',
        prefix='cupy-ci/kernel_cache_objects/'
    )
    print("GCP kernel cache: initializing local cache from GCS...", flush=True)
    backend.initialize_local_cache()
    _set_kernel_cache_backend(backend)


if int(os.environ.get('CUPY_TEST_RANDOM_SUBSAMPLE', '0')):
    seed = int(os.environ.get('_CUPY_TEST_SUBSAMPLE_SEED', '-1'))
    if seed == -1:
        # Generate seed and store as environment variable for pytest-xdist
        # (and maybe to be picked up the `for_all_dtypes`).
        import secrets

        seed = secrets.randbits(64)
        os.environ['_CUPY_TEST_SUBSAMPLE_SEED'] = str(seed)

    rng = random.Random(seed)

    def pytest_collection_modifyitems(session, config, items):
        original_len = len(items)
        if original_len == 0:
            return  # No tests, so nothing to subsample

        groups = collections.defaultdict(list)
        for item in items:
            base = f"{item.parent.nodeid}::{item.originalname}"
            groups[base].append(item)
        items[:] = [
            x for v in groups.values()
            for x in rng.sample(v, 1 + len(v) // 15)
        ]

        print(f"\nRandomly subsampled parametrized tests from {original_len} "
              f"to {len(items)} ({len(items) / original_len:.1%}). "
              f"(Similar subsampling is also done for `for_all_dtypes`!)\n")

        # Disable strict xfail on selected items — subsampling (e.g. via
        # for_all_dtypes) may remove the failing parametrizations.
        # (This also overrides the global pyproject setting.)
        # TODO(seberg): Could audit strict xfail to remove this.
        for item in items:
            for node in item.listchain():
                for i, marker in enumerate(node.own_markers):
                    if marker.name == 'xfail':
                        kwargs = dict(marker.kwargs)
                        kwargs['strict'] = False
                        node.own_markers[i] = pytest.mark.xfail(
                            *marker.args, **kwargs).mark
