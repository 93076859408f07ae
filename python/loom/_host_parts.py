"""Host work in parts on Python threads: NumPy calls that release the GIL (pocketfft, bincount), cut into
contiguous parts and run at once on one shared pool, the calling thread taking the first part. Used by the
host FFTs (_host_fft.py) and bincount (_statistics.py)."""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

_pool_lock = threading.Lock()
_pool: list = [None, 0]  # [executor, its worker count]


def threads():
    """loom.config.num_threads (the calling thread included); os.cpu_count() when loom cannot say."""
    try:
        from . import _core
        return max(1, int(_core.config_info()["num_threads"]))
    except Exception:
        return os.cpu_count() or 1


def _executor(workers):
    with _pool_lock:
        if _pool[0] is None or _pool[1] < workers:  # a smaller pool is dropped, not shut down: a call
            # in another thread may still be submitting to it (its threads end once it is collected)
            _pool[0], _pool[1] = ThreadPoolExecutor(workers, thread_name_prefix="loom-host"), workers
        return _pool[0]


def in_parts(count, work, nthreads):
    """work(lo, hi) over [0, count) cut into up to nthreads contiguous parts, run at once (the caller runs
    the first part); returns when every part is done, re-raising the first error. work must not call
    in_parts itself (a pool thread waiting on the pool)."""
    parts = max(1, min(nthreads, count))
    if parts == 1:
        work(0, count)
        return
    bounds = [count * i // parts for i in range(parts + 1)]
    pool = _executor(parts - 1)
    futures = [pool.submit(work, bounds[i], bounds[i + 1]) for i in range(1, parts)]
    try:
        work(bounds[0], bounds[1])
    finally:
        errors = [f.exception() for f in futures]
    for e in errors:
        if e is not None:
            raise e
