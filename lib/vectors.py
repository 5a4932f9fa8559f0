"""Dot products, norms, cosines and projections: the geometry behind attention scores.

Derived in the chapter *The Geometry of Dot Products* (``book/dot-products.md``):

* lengths and angles: :func:`dot`, :func:`norm`, :func:`cosine`, :func:`angle`;
* shadows: :func:`scalar_projection`, :func:`vector_projection`;
* keys at chosen angles to a query: :func:`keys_at_cosines`;
* random directions: :func:`random_cosines`, :func:`sample_cosines`, the exact density
  :func:`cosine_pdf` and tail :func:`cosine_tail`;
* nearly orthogonal sets: :func:`packing_lower_bound`, :func:`greedy_packing`.

Functions that take a dimension and a tolerance take them in the order ``(d, eps, ...)``.
The timers of ``Q Kᵀ`` live in :mod:`lib.timing`.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import (
    as_vector,
    nonzero_length,
    positive_float,
    positive_int,
    require_generator,
    same_length,
    tolerance,
)

__all__ = [
    "angle",
    "cosine",
    "cosine_pdf",
    "cosine_tail",
    "dot",
    "greedy_packing",
    "keys_at_cosines",
    "norm",
    "packing_lower_bound",
    "random_cosines",
    "sample_cosines",
    "scalar_projection",
    "vector_projection",
]


def dot(a, b) -> float:
    """Algebraic dot product, the sum of products of matching coordinates.

    .. math:: a \\cdot b = \\sum_i a_i b_i

    Derived in {ref}`sec-dot-definitions`.

    >>> dot([3, 4], [4, 3])
    24.0
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    return float(a @ b)


def norm(v) -> float:
    """Euclidean length ``‖v‖ = √(v · v)``.

    .. math:: \\lVert v \\rVert = \\sqrt{v \\cdot v} = \\sqrt{\\textstyle\\sum_i v_i^2}

    Derived in {ref}`sec-dot-norms`.

    >>> norm([3, 4])
    5.0
    """
    v = as_vector(v, "v")
    return float(np.sqrt(v @ v))


def cosine(a, b) -> float:
    """Cosine similarity, the dot product with both lengths divided out.

    .. math:: \\cos\\theta = \\frac{a \\cdot b}{\\lVert a \\rVert\\,\\lVert b \\rVert} \\in [-1, 1]

    Raises ``ValueError`` for a zero vector, whose direction is undefined.

    Derived in {ref}`sec-dot-cosine`.

    >>> cosine([1, 1], [5, 5])
    1.0
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    nonzero_length(a, "a"), nonzero_length(b, "b")
    c = float(a @ b) / float(np.sqrt(float(a @ a) * float(b @ b)))
    return float(np.clip(c, -1.0, 1.0))


def angle(a, b, degrees: bool = True) -> float:
    """Angle between two non-zero vectors, ``θ = arccos(cos θ)``, in degrees by default.

    Derived in {ref}`sec-dot-why`.

    >>> angle([1, 0], [0, 2])
    90.0
    """
    theta = float(np.arccos(cosine(a, b)))
    return float(np.degrees(theta)) if degrees else theta


def scalar_projection(a, b) -> float:
    """Signed length of the shadow of ``a`` on the line through ``b``.

    .. math:: \\operatorname{comp}_b a = \\frac{a \\cdot b}{\\lVert b \\rVert}
              = \\lVert a \\rVert \\cos\\theta

    Derived in {ref}`sec-dot-shadow`.

    >>> scalar_projection([3, 4], [4, 3])
    4.8
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    return float(a @ b) / nonzero_length(b, "b")


def vector_projection(a, b) -> np.ndarray:
    """The shadow itself: the component of ``a`` along ``b``.

    .. math:: \\operatorname{proj}_b a = \\frac{a \\cdot b}{b \\cdot b}\\, b,
              \\qquad (a - \\operatorname{proj}_b a) \\cdot b = 0

    ``a`` and ``b`` have shape ``(d,)``; so has the result.

    Derived in {ref}`sec-dot-shadow`.

    >>> vector_projection([3, 4], [1, 0]).tolist()
    [3.0, 0.0]
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    nonzero_length(b, "b")
    return (float(a @ b) / float(b @ b)) * b


def keys_at_cosines(q, cosines, length: float, rng: np.random.Generator) -> np.ndarray:
    """Keys of one length at chosen cosines to a query, each turned a random way off it.

    .. math:: k_j = \\ell\\,\\big(c_j\\, \\hat q + \\sqrt{1 - c_j^2}\\; \\hat r_j\\big),
              \\qquad \\hat q = q / \\lVert q \\rVert,\\quad \\hat r_j \\perp q,\\
              \\lVert \\hat r_j \\rVert = 1

    with ``ℓ = length``, ``c_j`` the ``cosines`` (each in ``[-1, 1]``) and ``r̂_j`` a standard
    normal draw with its shadow on ``q`` removed, normalized. ``q`` has shape ``(d,)`` with
    ``d ≥ 2``; the result has shape ``(len(cosines), d)``. Used in {ref}`sec-dot-hijack`.

    >>> K = keys_at_cosines([3.0, 4.0], [0.6, -1.0], 2.0, np.random.default_rng(0))
    >>> [round(cosine([3.0, 4.0], k), 6) for k in K], np.linalg.norm(K, axis=1).round(6).tolist()
    ([0.6, -1.0], [2.0, 2.0])
    """
    q = as_vector(q, "q")
    if q.size < 2:
        raise ValueError(f"q needs at least 2 coordinates to turn a key off it, got {q.size}")
    q_hat = q / nonzero_length(q, "q")
    cosines = as_vector(cosines, "cosines")
    if np.any(np.abs(cosines) > 1):
        raise ValueError(f"cosines must lie in [-1, 1], got {cosines.tolist()}")
    length = positive_float(length, "length")
    rng = require_generator(rng)
    keys = []
    for c in cosines:
        r = rng.standard_normal(q.size)
        r -= dot(r, q_hat) * q_hat  # keep only the part perpendicular to q
        r /= norm(r)
        keys.append(length * (c * q_hat + math.sqrt(1 - c**2) * r))
    return np.array(keys)


def random_cosines(d: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Cosines between ``n`` independent pairs of random vectors in ``d`` dimensions.

    Each vector has i.i.d. standard normal coordinates, so its direction is uniform on the
    sphere. The typical size of the cosine is ``1/√d``.

    >>> random_cosines(3, 2, np.random.default_rng(0)).shape
    (2,)
    """
    d, n = _dimension(d), positive_int(n, "n")
    rng = require_generator(rng)
    a = rng.standard_normal((n, d))
    b = rng.standard_normal((n, d))
    c = np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.clip(c, -1.0, 1.0)


def _dimension(d) -> int:
    d = positive_int(d, "d")
    if d < 2:
        raise ValueError("d must be at least 2: in one dimension every cosine is ±1")
    return d


def cosine_pdf(t, d: int) -> np.ndarray:
    """Exact density of the cosine between two independent random directions in ``d`` dimensions.

    .. math:: f_d(t) = \\frac{(1 - t^2)^{(d-3)/2}}{B\\left(\\tfrac12, \\tfrac{d-1}{2}\\right)},
              \\qquad -1 < t < 1

    ``t`` is an array of any shape with entries in ``[-1, 1]``; the result has its shape. For
    ``d = 2`` the density is infinite at ``±1``; for ``d = 3`` it is uniform, ``1/2``.

    Derived in {ref}`sec-dot-near-orthogonal`.

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

    Derived in {ref}`sec-dot-near-orthogonal`.

    >>> sample_cosines(1000, 3, np.random.default_rng(0)).shape
    (3,)
    """
    d, n = _dimension(d), positive_int(n, "n")
    rng = require_generator(rng)
    a = (d - 1) / 2
    return 2.0 * rng.beta(a, a, n) - 1.0


def cosine_tail(d: int, eps: float, points: int = 20001) -> float:
    """Probability that two random directions in ``d`` dimensions have ``|cos θ| ≥ eps``.

    .. math:: P(|\\cos\\theta| \\ge \\varepsilon) = 2 \\int_\\varepsilon^1 f_d(t)\\,dt
              \\le 2 e^{-d \\varepsilon^2 / 2}

    Computed by the trapezoid rule on ``points`` nodes over ``[eps, 1]``.

    Derived in {ref}`sec-dot-near-orthogonal`.

    >>> round(cosine_tail(3, 0.5), 6)
    0.5
    """
    d, eps = _dimension(d), tolerance(eps)
    points = positive_int(points, "points")
    if points < 3:
        raise ValueError("points must be at least 3")
    if d == 2:  # integrable singularity at t = 1: use the exact arcsine law instead
        return float(1.0 - 2.0 * np.arcsin(eps) / np.pi)
    t = np.linspace(eps, 1.0, points)
    f = cosine_pdf(t, d)
    return float(min(1.0, 2.0 * np.sum((f[1:] + f[:-1]) / 2 * np.diff(t))))


def packing_lower_bound(d: int, eps: float) -> float:
    """A guaranteed number of unit vectors in ``d`` dimensions with all ``|cos| ≤ eps``.

    .. math:: N(d, \\varepsilon) \\ge \\left\\lceil \\tfrac12 \\lfloor 1/p \\rfloor \\right\\rceil,
              \\qquad p = P(|\\cos\\theta| > \\varepsilon)

    (draw ``⌊1/p⌋`` random directions and delete one vector of every bad pair), with the
    exact ``p`` of :func:`cosine_tail`, not its bound ``p ≤ 2 e^{-d ε²/2}``: the result is at
    least the closed form ``⌈⌊e^{d ε²/2} / 2⌋ / 2⌉ ≈ e^{d ε²/2} / 4``, and often far more.
    Returned as a float because it grows exponentially in ``d``.

    Derived in {ref}`sec-dot-packing`.

    >>> packing_lower_bound(3, 0.5)
    1.0
    """
    p = cosine_tail(d, eps)
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
    d, eps = _dimension(d), tolerance(eps)
    n_candidates, chunk = positive_int(n_candidates, "n_candidates"), positive_int(chunk, "chunk")
    rng = require_generator(rng)
    kept = np.empty((0, d))
    done = 0
    while done < n_candidates:
        size = min(chunk, n_candidates - done)
        done += size
        c = rng.standard_normal((size, d))
        c /= np.linalg.norm(c, axis=1, keepdims=True)
        if kept.shape[0]:
            c = c[np.all(np.abs(c @ kept.T) <= eps, axis=1)]
        new, m = np.empty_like(c), 0
        for v in c:  # survivors of this chunk must also be compatible with each other
            if np.all(np.abs(new[:m] @ v) <= eps):
                new[m], m = v, m + 1
        kept = np.vstack([kept, new[:m]])
    return kept
