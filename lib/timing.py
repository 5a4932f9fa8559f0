"""Wall-clock timers for the score matrix ``S = Q Kᵀ``, on a fixed number of BLAS threads.

Timings vary between runs and between machines: they illustrate how the cost grows
(``2 N² d_k`` floating-point operations for one ``Q Kᵀ``), and are never quoted as fixed
figures. The timing itself is :func:`lib.measure.best_time`, which limits numpy's BLAS library
to a number of threads in-process with ``threadpoolctl`` and restores it afterwards.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from ._checks import non_negative_float, positive_int, require_generator
from .measure import best_time

__all__ = ["time_qk", "time_qk_sweep"]


def _dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be a floating-point type, got {dtype!r}") from None
    if dt.kind != "f":
        raise ValueError(f"dtype must be a floating-point type, got {dtype!r}")
    return dt


def time_qk(N: int, d_k: int, rng: np.random.Generator, repeat: int = 5,
            min_time: float = 0.02, dtype=np.float32, threads: int = 1) -> float:
    """Best wall-clock time, in seconds, of one score matrix ``S = Q Kᵀ``, ``Q, K: (N, d_k)``.

    .. math:: S = Q K^\\top \\in \\mathbb{R}^{N \\times N}, \\qquad
              \\text{cost} = 2 N^2 d_k \\ \\text{floating-point operations}

    ``Q`` and ``K`` are standard normal in ``dtype`` (32-bit floats by default). The product
    runs on ``threads`` BLAS threads, at least ``repeat`` times and until ``min_time`` seconds
    have passed (at most 1000 runs); the fastest run, the least disturbed by other processes,
    is returned.

    >>> time_qk(8, 4, np.random.default_rng(0)) > 0
    True
    """
    N, d_k = positive_int(N, "N"), positive_int(d_k, "d_k")
    repeat, threads = positive_int(repeat, "repeat"), positive_int(threads, "threads")
    min_time = non_negative_float(min_time, "min_time")
    dt = _dtype(dtype)
    rng = require_generator(rng)
    Q = rng.standard_normal((N, d_k)).astype(dt)  # (N, d_k)
    K = rng.standard_normal((N, d_k)).astype(dt)  # (N, d_k)
    S = np.empty((N, N), dtype=dt)                # (N, N)
    with threadpool_limits(limits=threads, user_api="blas"):
        np.matmul(Q, K.T, out=S)  # warm-up: the first call pays for start-up costs
    return best_time(np.matmul, Q, K.T, out=S, repeat=repeat, min_time=min_time,
                     threads=threads)


def time_qk_sweep(shapes, rng: np.random.Generator, repeat: int = 5, min_time: float = 0.02,
                  dtype=np.float32, threads: int = 1) -> list[float]:
    """:func:`time_qk` for every ``(N, d_k)`` in ``shapes``, in order, in seconds.

    One thread (the default) measures one core and stays steady on a busy machine, where a
    multi-threaded product of small matrices can stall waiting for its other threads.

    >>> len(time_qk_sweep([(8, 4), (16, 4)], np.random.default_rng(0), min_time=0.0))
    2
    """
    pairs = []
    for shape in shapes:
        if not isinstance(shape, (tuple, list)) or len(shape) != 2:
            raise ValueError(f"each shape must be a pair (N, d_k), got {shape!r}")
        pairs.append((positive_int(shape[0], "N"), positive_int(shape[1], "d_k")))
    if not pairs:
        raise ValueError("shapes is empty: give at least one pair (N, d_k)")
    rng = require_generator(rng)
    return [time_qk(N, d_k, rng, repeat=repeat, min_time=min_time, dtype=dtype,
                    threads=threads) for N, d_k in pairs]
