"""Dot products, norms, cosines and projections: the geometry behind attention scores."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ._checks import as_vector, generator, positive_int, same_length


def dot(a, b) -> float:
    """Algebraic dot product, the sum of products of matching coordinates.

    .. math:: a \\cdot b = \\sum_i a_i b_i

    >>> dot([3, 4], [4, 3])
    24.0
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    return float(a @ b)


def norm(v) -> float:
    """Euclidean length ``|v| = √(v · v)``.

    >>> norm([3, 4])
    5.0
    """
    v = as_vector(v, "v")
    return float(np.sqrt(v @ v))


def _nonzero(v: np.ndarray, name: str) -> float:
    length = float(np.sqrt(v @ v))
    if length == 0.0:
        raise ValueError(f"{name} is the zero vector: it has no direction")
    return length


def cosine(a, b) -> float:
    """Cosine similarity, the dot product with both lengths divided out.

    .. math:: \\cos\\theta = \\frac{a \\cdot b}{|a|\\,|b|} \\in [-1, 1]

    Raises ``ValueError`` for a zero vector, whose direction is undefined.

    >>> cosine([1, 1], [5, 5])
    1.0
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    _nonzero(a, "a"), _nonzero(b, "b")
    c = float(a @ b) / float(np.sqrt(float(a @ a) * float(b @ b)))
    return float(np.clip(c, -1.0, 1.0))


def angle(a, b, degrees: bool = True) -> float:
    """Angle between two non-zero vectors, ``θ = arccos(cos θ)``, in degrees by default.

    >>> angle([1, 0], [0, 2])
    90.0
    """
    theta = float(np.arccos(cosine(a, b)))
    return float(np.degrees(theta)) if degrees else theta


def scalar_projection(a, b) -> float:
    """Signed length of the shadow of ``a`` on the line through ``b``.

    .. math:: \\operatorname{comp}_b a = \\frac{a \\cdot b}{|b|} = |a| \\cos\\theta

    >>> scalar_projection([3, 4], [4, 3])
    4.8
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    return float(a @ b) / _nonzero(b, "b")


def vector_projection(a, b) -> np.ndarray:
    """The shadow itself: the component of ``a`` along ``b``, ``(a·b / b·b) b``.

    >>> vector_projection([3, 4], [1, 0]).tolist()
    [3.0, 0.0]
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    _nonzero(b, "b")
    return (float(a @ b) / float(b @ b)) * b


def random_cosines(d: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Cosines between ``n`` independent pairs of random vectors in ``d`` dimensions.

    Each vector has i.i.d. standard normal coordinates, so its direction is uniform on the
    sphere. The typical size of the cosine is ``1/√d``.

    >>> random_cosines(3, 2, np.random.default_rng(0)).shape
    (2,)
    """
    d, n = _dimension(d), positive_int(n, "n")
    rng = generator(rng)
    a = rng.standard_normal((n, d))
    b = rng.standard_normal((n, d))
    c = np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.clip(c, -1.0, 1.0)


def _dimension(d) -> int:
    d = positive_int(d, "d")
    if d < 2:
        raise ValueError("d must be at least 2: in one dimension every cosine is ±1")
    return d


def _tolerance(eps) -> float:
    try:
        value = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"eps must be a number in [0, 1), got {eps!r}") from None
    if not np.isfinite(value) or not 0.0 <= value < 1.0:
        raise ValueError(f"eps must be a number in [0, 1), got {eps!r}")
    return value


def cosine_pdf(t, d: int) -> np.ndarray:
    """Exact density of the cosine between two independent random directions in ``d`` dimensions.

    .. math:: f_d(t) = \\frac{(1 - t^2)^{(d-3)/2}}{B\\left(\\tfrac12, \\tfrac{d-1}{2}\\right)},
              \\qquad -1 < t < 1

    ``t`` is an array of any shape with entries in ``[-1, 1]``; the result has its shape. For
    ``d = 2`` the density is infinite at ``±1``; for ``d = 3`` it is uniform, ``1/2``.

    >>> np.round(cosine_pdf([0.0, 0.5], 3), 12).tolist()
    [0.5, 0.5]
    """
    d = _dimension(d)
    t = np.asarray(t, dtype=float)
    if t.size == 0:
        raise ValueError("t is empty")
    if not np.all(np.isfinite(t)) or np.any(np.abs(t) > 1.0):
        raise ValueError("t must lie in [-1, 1]: a cosine cannot leave that interval")
    log_beta = math.lgamma(0.5) + math.lgamma((d - 1) / 2) - math.lgamma(d / 2)
    with np.errstate(divide="ignore"):
        return np.power(1.0 - t * t, (d - 3) / 2) * math.exp(-log_beta)


def sample_cosines(d: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws from the exact law of the cosine between random directions (fast, any ``d``).

    .. math:: \\cos\\theta \\overset{d}{=} 2B - 1, \\qquad
              B \\sim \\operatorname{Beta}\\left(\\tfrac{d-1}{2}, \\tfrac{d-1}{2}\\right)

    Same distribution as :func:`random_cosines`, without drawing the ``2 n d`` coordinates.
    Returns shape ``(n,)``.

    >>> sample_cosines(1000, 3, np.random.default_rng(0)).shape
    (3,)
    """
    d, n = _dimension(d), positive_int(n, "n")
    rng = generator(rng)
    a = (d - 1) / 2
    return 2.0 * rng.beta(a, a, n) - 1.0


def cosine_tail(eps: float, d: int, points: int = 20001) -> float:
    """Probability that two random directions in ``d`` dimensions have ``|cos θ| ≥ eps``.

    .. math:: P(|\\cos\\theta| \\ge \\varepsilon) = 2 \\int_\\varepsilon^1 f_d(t)\\,dt
              \\le 2 e^{-d \\varepsilon^2 / 2}

    Computed by the trapezoid rule on ``points`` nodes over ``[eps, 1]``.

    >>> round(cosine_tail(0.5, 3), 6)
    0.5
    """
    eps, d = _tolerance(eps), _dimension(d)
    points = positive_int(points, "points")
    if points < 3:
        raise ValueError("points must be at least 3")
    if d == 2:  # integrable singularity at t = 1: use the exact arcsine law instead
        return float(1.0 - 2.0 * np.arcsin(eps) / np.pi)
    t = np.linspace(eps, 1.0, points)
    f = cosine_pdf(t, d)
    return float(min(1.0, 2.0 * np.sum((f[1:] + f[:-1]) / 2 * np.diff(t))))


def packing_lower_bound(eps: float, d: int) -> float:
    """A guaranteed number of unit vectors in ``d`` dimensions with all ``|cos| ≤ eps``.

    .. math:: N(d, \\varepsilon) \\ge \\left\\lceil \\tfrac12 \\lfloor 1/p \\rfloor \\right\\rceil,
              \\qquad p = P(|\\cos\\theta| > \\varepsilon)

    (draw ``⌊1/p⌋`` random directions and delete one vector of every bad pair). Returned as
    a float because it grows like ``e^{d ε² / 2} / 4``.

    >>> packing_lower_bound(0.5, 3)
    1.0
    """
    p = cosine_tail(eps, d)
    if p <= 0.0:
        return math.inf
    inverse = 1.0 / p
    if not math.isfinite(inverse):
        return math.inf
    return float(math.ceil(math.floor(inverse) / 2.0))


def greedy_packing(d: int, eps: float, n_candidates: int, rng: np.random.Generator,
                   chunk: int = 1024) -> np.ndarray:
    """Nearly orthogonal unit vectors found greedily among random candidates.

    Candidates are random directions, tried in order; one is kept when
    ``|cos(candidate, kept)| ≤ eps`` for every vector already kept. Returns the kept vectors,
    shape ``(m, d)``, rows of length 1: a lower bound ``m`` on how many fit.

    >>> greedy_packing(2, 0.1, 200, np.random.default_rng(0)).shape[0]
    2
    """
    d, eps = _dimension(d), _tolerance(eps)
    n_candidates, chunk = positive_int(n_candidates, "n_candidates"), positive_int(chunk, "chunk")
    rng = generator(rng)
    kept = np.empty((0, d))
    done = 0
    while done < n_candidates:
        size = min(chunk, n_candidates - done)
        done += size
        c = rng.standard_normal((size, d))
        c /= np.linalg.norm(c, axis=1, keepdims=True)
        if kept.shape[0]:
            c = c[np.all(np.abs(c @ kept.T) <= eps, axis=1)]
        new = []
        for v in c:  # survivors of this chunk must also be compatible with each other
            if all(abs(float(v @ w)) <= eps for w in new):
                new.append(v)
        if new:
            kept = np.vstack([kept, np.array(new)])
    return kept


def _seconds(t) -> float:
    try:
        value = float(t)
    except (TypeError, ValueError):
        value = math.nan
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"min_time must be a non-negative number of seconds, got {t!r}")
    return value


def time_qk(n: int, d_k: int, rng: np.random.Generator, repeat: int = 5,
            min_time: float = 0.02) -> float:
    """Best wall-clock time, in seconds, of one score matrix ``Q Kᵀ`` with ``Q, K: (n, d_k)``.

    The product costs ``2 n² d_k`` floating-point operations (a multiply and an add per term).
    It runs at least ``repeat`` times and until ``min_time`` seconds have passed (at most 1000
    runs), and the fastest run is returned: the least disturbed by other processes. Timing
    varies between runs and machines: never quote it as a fixed figure.

    >>> time_qk(8, 4, np.random.default_rng(0)) > 0
    True
    """
    n, d_k = positive_int(n, "n"), positive_int(d_k, "d_k")
    repeat = positive_int(repeat, "repeat")
    min_time = _seconds(min_time)
    rng = generator(rng)
    Q = rng.standard_normal((n, d_k))
    K = rng.standard_normal((n, d_k))
    S = np.empty((n, n))
    np.matmul(Q, K.T, out=S)  # warm-up: the first call pays for thread start-up
    best, runs, began = math.inf, 0, time.perf_counter()
    while runs < repeat or (time.perf_counter() - began < min_time and runs < 1000):
        start = time.perf_counter()
        np.matmul(Q, K.T, out=S)
        best = min(best, time.perf_counter() - start)
        runs += 1
    return max(best, 1e-9)


_SWEEP_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from lib.vectors import time_qk
args = json.loads(sys.argv[2])
rng = np.random.default_rng(args["seed"])
times = [time_qk(n, d, rng, repeat=args["repeat"], min_time=args["min_time"])
         for n, d in args["shapes"]]
print(json.dumps(times))
"""


def time_qk_sweep(shapes, seed: int = 0, threads: int = 1, repeat: int = 5,
                  min_time: float = 0.02, timeout: float = 120.0) -> list[float]:
    """:func:`time_qk` for every ``(n, d_k)`` in ``shapes``, on ``threads`` BLAS threads.

    The number of threads of numpy's BLAS library is fixed when numpy loads, so the sweep
    runs in a fresh Python process with ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and
    ``MKL_NUM_THREADS`` set to ``threads``. One thread (the default) measures one core and
    stays stable on a busy machine, where a multi-threaded product of small matrices can
    stall for a whole scheduler time slice waiting for its other threads. Returns the best
    time in seconds of each shape, in order. Never quote the result as a fixed figure.

    >>> len(time_qk_sweep([(8, 4), (16, 4)], repeat=2, min_time=0.0))
    2
    """
    pairs = []
    for shape in shapes:
        if not isinstance(shape, (tuple, list)) or len(shape) != 2:
            raise ValueError(f"each shape must be a pair (n, d_k), got {shape!r}")
        pairs.append([positive_int(shape[0], "n"), positive_int(shape[1], "d_k")])
    if not pairs:
        raise ValueError("shapes is empty: give at least one pair (n, d_k)")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    threads, repeat = positive_int(threads, "threads"), positive_int(repeat, "repeat")
    min_time = _seconds(min_time)
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    args = {"shapes": pairs, "seed": int(seed), "repeat": repeat, "min_time": min_time}
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", _SWEEP_SCRIPT, root, json.dumps(args)],
                          env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"the timing process failed:\n{done.stderr.strip()}")
    return [float(t) for t in json.loads(done.stdout.strip().splitlines()[-1])]
