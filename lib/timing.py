"""Wall-clock timers for the score matrix ``S = Q Kᵀ``, on a fixed number of BLAS threads.

Timings vary between runs and between machines: they illustrate how the cost grows
(``2 N² d_k`` floating-point operations for one ``Q Kᵀ``), and are never quoted as fixed
figures. The timing itself is :func:`lib.measure.best_time`, which limits numpy's BLAS library
to a number of threads in-process with ``threadpoolctl`` and restores it afterwards.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from ._checks import non_negative_float, positive_int, require_generator
from .cost import attention, softmax_rows
from .measure import best_time, peak_bytes

__all__ = ["time_qk", "time_qk_sweep", "time_attention_steps", "measure_head", "last_level_cache",
           "stream_bandwidth", "softmax_past_the_cache"]


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


# -- one head of attention, step by step ({ref}`sec-cost-measured`) -----------------------------

def time_attention_steps(Q, K, V, repeat: int = 3, min_time: float = 0.01) -> list[float]:
    """Best times of the three steps of one head (scores, softmax, weighted sum) and of a run.

    Each step's best is over the runs, and the whole's is the best run's, so the whole is at
    least the sum of the steps. Runs on the BLAS threads the caller set.

    >>> Q = np.ones((8, 4), dtype=np.float32)
    >>> len(time_attention_steps(Q, Q, Q, repeat=1, min_time=0.0))
    4
    """
    best, runs, began = [math.inf] * 4, 0, time.perf_counter()
    while runs < repeat or time.perf_counter() - began < min_time:
        t0 = time.perf_counter()
        S = (Q * (1 / math.sqrt(Q.shape[1]))) @ K.T      # the scores
        t1 = time.perf_counter()
        softmax_rows(S)                                  # the weights, in place
        t2 = time.perf_counter()
        S @ V                                            # the weighted sum
        t3 = time.perf_counter()
        steps = (t1 - t0, t2 - t1, t3 - t2, t3 - t0)
        best = [min(b, t) for b, t in zip(best, steps, strict=True)]
        runs += 1
    return best


def measure_head(sizes, d_k: int, rng: np.random.Generator) -> dict:
    """Time one head of float32 attention at each ``N`` in ``sizes``, on one BLAS thread.

    Returns ``times`` (seconds of the scores, softmax, weighted sum and whole, per size),
    ``memory`` (peak bytes of :func:`lib.cost.attention`, by ``tracemalloc``), ``peak`` (the
    best matrix-product rate seen, GFLOP/s) and ``softmax_ceiling`` (GFLOP/s of the softmax on
    a 256 x 256 matrix that stays in the cache, 5 operations a score).

    >>> r = measure_head((16, 32), 4, np.random.default_rng(0))
    >>> sorted(r)
    ['memory', 'peak', 'softmax_ceiling', 'times']
    """
    rng = require_generator(rng)
    with threadpool_limits(limits=1, user_api="blas"):
        A = rng.standard_normal((512, 512)).astype(np.float32)
        peak = 2 * 512**3 / best_time(np.matmul, A, A, repeat=3) / 1e9
        small = rng.standard_normal((256, 256)).astype(np.float32)
        softmax_ceiling = 5 * small.size / best_time(softmax_rows, small, repeat=5,
                                                     min_time=0.01) / 1e9
        times = {"scores": [], "softmax": [], "weighted sum": [], "attention": []}
        memory = []
        for n in sizes:
            Q, K, V = (rng.standard_normal((n, d_k)).astype(np.float32) for _ in range(3))
            memory.append(peak_bytes(attention, Q, K, V))  # also warms the caches up
            steps = time_attention_steps(Q, K, V, repeat=3 if n < 2048 else 2)
            for name, t in zip(times, steps, strict=True):
                times[name].append(t)
            for k in (0, 2):
                peak = max(peak, 2 * n * n * d_k / steps[k] / 1e9)
    return {"times": times, "memory": memory, "peak": peak, "softmax_ceiling": softmax_ceiling}


def last_level_cache() -> int:
    """The size in bytes of the last-level cache the system reports, or 0 if it reports none.

    >>> last_level_cache() >= 0
    True
    """
    best_level, best_size = 0, 0
    caches = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(caches))
    except OSError:
        entries = []
    for entry in entries:                    # Linux: one folder per cache, with its level
        try:
            with open(os.path.join(caches, entry, "level")) as f:
                level = int(f.read())
            with open(os.path.join(caches, entry, "size")) as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        units = {"K": 2**10, "M": 2**20, "G": 2**30}
        size = int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text or 0)
        if level > best_level or (level == best_level and size > best_size):
            best_level, best_size = level, size
    if best_size > 0:
        return best_size
    for name in ("SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            size = os.sysconf(name)
        except (ValueError, OSError, AttributeError):
            continue
        if size and size > 0:
            return int(size)
    return 0


def _inplace_bandwidth(P: np.ndarray) -> float:
    """GB/s of a pass that reads and writes ``P`` in place (no write-allocate), best of 3."""
    return 2 * P.nbytes / best_time(np.multiply, P, 1.0, out=P, repeat=3) / 1e9


def stream_bandwidth(rng: np.random.Generator, nbytes: int = 2**28) -> float:
    """Memory bandwidth in GB/s seen by passes over a float32 array of ``nbytes`` bytes.

    Each pass reads and writes every number in place, as the softmax's passes do, and is
    counted as ``2 x nbytes`` bytes; one BLAS thread, best of 3. Where the array fits in the
    machine's last-level cache, this is the cache's bandwidth, not main memory's.

    >>> stream_bandwidth(np.random.default_rng(0), nbytes=2**16) > 0
    True
    """
    rng = require_generator(rng)
    n = positive_int(nbytes, "nbytes") // 4
    P = rng.random(n, dtype=np.float32)
    with threadpool_limits(limits=1, user_api="blas"):
        return _inplace_bandwidth(P)


def softmax_past_the_cache(rng: np.random.Generator, cache: int, n_max: int = 8192,
                           assumed: int = 64 * 2**20) -> dict:
    """The softmax on an ``N x N`` float32 matrix at least twice the last-level ``cache``.

    ``N`` is the smallest power of two from 4096 with ``4 N² >= 2 cache`` (``assumed`` bytes if
    ``cache`` is 0), at most ``n_max``. On the same matrix, the bandwidth of a pass that reads
    and writes it in place, as the softmax's passes do (no write-allocate), counted as
    ``2 x 4 N²`` bytes. Returns ``n``, ``nbytes``, ``past`` (whether the matrix is at least
    twice the cache), ``seconds`` (best softmax) and ``bandwidth`` (GB/s), on one BLAS thread.

    >>> r = softmax_past_the_cache(np.random.default_rng(0), cache=2**20, n_max=4096)
    >>> r["n"], r["past"]
    (4096, True)
    """
    rng = require_generator(rng)
    cache_bytes = cache if cache > 0 else assumed
    n = 4096
    while 4 * n * n < 2 * cache_bytes and n < n_max:
        n *= 2
    P = np.empty((n, n), dtype=np.float32)
    P[:] = rng.random(n, dtype=np.float32)   # every row the same scores: as fast, less to draw
    with threadpool_limits(limits=1, user_api="blas"):
        bandwidth = _inplace_bandwidth(P)
        seconds = best_time(softmax_rows, P, repeat=2)
    return {"n": n, "nbytes": P.nbytes, "past": P.nbytes >= 2 * cache_bytes,
            "seconds": seconds, "bandwidth": bandwidth}
