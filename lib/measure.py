"""Measuring on this machine: best-of-several wall-clock times on one BLAS thread, peak memory.

Times vary between runs and machines; never quote them as fixed figures. Peak memory from
:mod:`tracemalloc` counts what Python and numpy allocate (numpy reports its array buffers to
it), not what the BLAS library keeps for itself.
"""

from __future__ import annotations

import math
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

from ._checks import non_negative_float, positive_int

__all__ = ["best_time", "loglog_slope", "peak_bytes"]


def best_time(f, *args, repeat: int = 3, min_time: float = 0.0, threads: int = 1,
              **kwargs) -> float:
    """Fastest of at least ``repeat`` calls ``f(*args, **kwargs)``, in seconds, on ``threads``.

    The BLAS library is limited to ``threads`` threads (by :mod:`threadpoolctl`, in this
    process) for the duration; calls continue until ``min_time`` seconds have passed (at most
    1000). The fastest call is the one least disturbed by other processes.

    >>> best_time(sum, [1, 2, 3]) > 0
    True
    """
    repeat, threads = positive_int(repeat, "repeat"), positive_int(threads, "threads")
    min_time = non_negative_float(min_time, "min_time")
    best, runs = math.inf, 0
    with threadpool_limits(limits=threads, user_api="blas"):
        began = time.perf_counter()
        while runs < repeat or (time.perf_counter() - began < min_time and runs < 1000):
            start = time.perf_counter()
            f(*args, **kwargs)
            best = min(best, time.perf_counter() - start)
            runs += 1
    return max(best, 1e-9)


def peak_bytes(f, *args, **kwargs) -> int:
    """Peak bytes allocated while ``f(*args, **kwargs)`` runs, above what was allocated before.

    Measured with :mod:`tracemalloc`, which sees numpy's array buffers and Python's objects.
    The result of ``f`` is discarded after the measurement (it counts, since it is allocated).

    >>> peak_bytes(np.zeros, 1000) >= 8000
    True
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = f(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1] - before
        del result
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return int(peak)


def loglog_slope(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x``: the exponent ``b`` of ``y ≈ a x^b``.

    >>> round(loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]), 6)
    2.0
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D of the same length, got {x.shape} and {y.shape}")
    if x.size < 2:
        raise ValueError("a slope needs at least two points")
    if np.any(x <= 0) or np.any(y <= 0) or not np.all(np.isfinite(x) & np.isfinite(y)):
        raise ValueError("x and y must be finite and positive for a log-log fit")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
