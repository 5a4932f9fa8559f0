"""Expectation and variance, exactly for finite distributions and by seeded simulation.

Exact moments of finite distributions (:func:`expectation`, :func:`variance`,
:func:`covariance`, with ``Fraction`` probabilities), seeded simulations of ``q · k``
(:func:`sample_components`, :func:`simulate_dot_products`; every one takes an ``rng``), and the
standard errors that say how far a simulated mean or variance may stray
(:func:`standard_error`, :func:`variance_standard_error`). The chapter *Expectation and
Variance* derives them; each docstring names its section.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._checks import as_vector, positive_int, require_generator

__all__ = [
    "COMPONENT_DISTRIBUTIONS",
    "covariance",
    "expectation",
    "fair_die",
    "independent_pair",
    "sample_components",
    "simulate_dot_products",
    "standard_error",
    "variance",
    "variance_standard_error",
]

#: Distributions with mean 0 and variance 1 used for the components of q and k.
COMPONENT_DISTRIBUTIONS = ("normal", "uniform", "coin")


def _distribution(values, probs):
    values, probs = list(values), list(probs)
    if not values:
        raise ValueError("the distribution is empty: give at least one value")
    if len(values) != len(probs):
        raise ValueError(
            f"values and probs must have the same length, got {len(values)} and {len(probs)}"
        )
    if any(p < 0 for p in probs):
        raise ValueError("probabilities must be non-negative")
    total = sum(probs)
    if isinstance(total, Fraction) or all(isinstance(p, int) for p in probs):
        ok = total == 1
    else:
        ok = abs(float(total) - 1.0) < 1e-9
    if not ok:
        raise ValueError(f"probabilities must sum to 1, they sum to {total}")
    return values, probs


def expectation(values, probs, g=None):
    """Probability-weighted average, ``E[g(X)] = Σ_x g(x) P(X = x)`` (``g`` defaults to identity).

    Exact when the inputs are ``Fraction`` or ``int``. Derived in {ref}`sec-expectation`.

    >>> expectation(*fair_die())
    Fraction(7, 2)
    """
    values, probs = _distribution(values, probs)
    g = g or (lambda x: x)
    return sum(g(x) * p for x, p in zip(values, probs, strict=True))


def variance(values, probs):
    """Expected squared deviation from the mean, ``Var(X) = E[(X − μ)²]``.

    Derived in {ref}`sec-variance`.

    >>> variance(*fair_die())
    Fraction(35, 12)
    """
    mu = expectation(values, probs)
    return expectation(values, probs, lambda x: (x - mu) ** 2)


def fair_die():
    """Faces 1–6 of a fair die and their exact probabilities (``Fraction(1, 6)`` each).

    >>> fair_die()[0]
    [1, 2, 3, 4, 5, 6]
    """
    return list(range(1, 7)), [Fraction(1, 6)] * 6


def sample_components(dist: str, size, rng: np.random.Generator) -> np.ndarray:
    """Draw i.i.d. components with mean 0 and variance 1 from one of three shapes.

    ``"normal"``: N(0, 1); ``"uniform"``: uniform on [−√3, √3]; ``"coin"``: ±1 with
    probability 1/2 each.

    >>> sample_components("coin", 4, np.random.default_rng(0)).tolist()
    [1.0, -1.0, -1.0, -1.0]
    """
    rng = require_generator(rng)
    if dist == "normal":
        return rng.standard_normal(size)
    if dist == "uniform":
        return rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size)
    if dist == "coin":
        return np.where(rng.random(size) < 0.5, -1.0, 1.0)
    raise ValueError(f"dist must be one of {COMPONENT_DISTRIBUTIONS}, got {dist!r}")


def simulate_dot_products(
    d_k: int, n: int, rng: np.random.Generator, dist: str = "normal", scale: bool = False
) -> np.ndarray:
    """``n`` independent dot products ``q · k`` of ``d_k``-dimensional random vectors.

    .. math:: q \\cdot k = \\sum_{i=1}^{d_k} q_i k_i, \\qquad
              \\mathbb{E}[q \\cdot k] = 0, \\quad \\operatorname{Var}(q \\cdot k) = d_k

    With ``scale=True`` each product is divided by ``√d_k`` (variance 1). Returns shape
    ``(n,)``. Derived in {ref}`sec-step-2`.

    >>> simulate_dot_products(4, 3, np.random.default_rng(0)).shape
    (3,)
    """
    d_k, n = positive_int(d_k, "d_k"), positive_int(n, "n")
    q = sample_components(dist, (n, d_k), rng)
    k = sample_components(dist, (n, d_k), rng)
    x = np.einsum("ij,ij->i", q, k)
    return x / np.sqrt(d_k) if scale else x


def independent_pair(x, y):
    """Joint distribution of two independent finite random variables, ``P(x, y) = P(x) P(y)``.

    ``x`` and ``y`` are ``(values, probs)`` pairs such as :func:`fair_die` returns. The result
    is ``(pairs, probs)``: every ``(x, y)`` combination and its probability, ready for
    :func:`expectation` with a ``g`` that takes a pair.

    >>> pairs, probs = independent_pair(fair_die(), fair_die())
    >>> len(pairs), probs[0], expectation(pairs, probs, lambda xy: xy[0] * xy[1])
    (36, Fraction(1, 36), Fraction(49, 4))
    """
    try:
        (xv, xp), (yv, yp) = x, y
    except (TypeError, ValueError):
        raise ValueError("x and y must each be a (values, probs) pair") from None
    xv, xp = _distribution(xv, xp)
    yv, yp = _distribution(yv, yp)
    pairs = [(a, b) for a in xv for b in yv]
    probs = [pa * pb for pa in xp for pb in yp]
    return pairs, probs


def covariance(pairs, probs):
    """Covariance of a joint distribution over pairs, ``Cov(X, Y) = E[XY] − E[X] E[Y]``.

    ``pairs`` lists the ``(x, y)`` outcomes and ``probs`` their probabilities. Zero for an
    independent pair (Rule 2); exact when the inputs are ``Fraction`` or ``int``. Derived in
    {ref}`sec-four-rules`.

    >>> covariance([(1, 1), (-1, -1)], [Fraction(1, 2), Fraction(1, 2)])
    Fraction(1, 1)
    """
    pairs = list(pairs)
    if any(not isinstance(xy, (tuple, list)) or len(xy) != 2 for xy in pairs):
        raise ValueError("pairs must be (x, y) outcomes of length 2")
    e_xy = expectation(pairs, probs, lambda xy: xy[0] * xy[1])
    e_x = expectation(pairs, probs, lambda xy: xy[0])
    e_y = expectation(pairs, probs, lambda xy: xy[1])
    return e_xy - e_x * e_y


def standard_error(x) -> float:
    """Estimated standard error of the sample mean of i.i.d. draws, ``s / √n``.

    .. math:: \\operatorname{SE}(\\bar x) = \\sqrt{\\frac{1}{n(n - 1)} \\sum_i (x_i - \\bar x)^2}

    ``x`` has shape ``(n,)`` with ``n ≥ 2``. Derived in {ref}`sec-ev-deeper-standard-errors`.

    >>> standard_error([1.0, 2.0, 3.0, 4.0])
    0.6454972243679028
    """
    x = _sample(x)
    return float(np.std(x, ddof=1) / np.sqrt(x.size))


def variance_standard_error(x) -> float:
    """Estimated standard error of the sample variance of i.i.d. draws.

    .. math:: \\operatorname{SE}(\\hat\\sigma^2) \\approx \\sqrt{\\frac{m_4 - m_2^2}{n}},
              \\qquad m_r = \\frac1n \\sum_i (x_i - \\bar x)^r

    For normal draws ``m_4 ≈ 3σ⁴``, which gives ``σ² √(2/n)``. ``x`` has shape ``(n,)`` with
    ``n ≥ 2``. Derived in {ref}`sec-ev-deeper-standard-errors`.

    >>> round(variance_standard_error([-1.0, 1.0] * 50), 12)  # a coin: m_4 = m_2² = 1
    0.0
    """
    x = _sample(x)
    dev2 = (x - x.mean()) ** 2
    m2, m4 = dev2.mean(), (dev2**2).mean()
    return float(np.sqrt(max(m4 - m2**2, 0.0) / x.size))


def _sample(x) -> np.ndarray:
    x = as_vector(x, "x")
    if x.size < 2:
        raise ValueError(f"a standard error needs at least 2 draws, got {x.size}")
    return x
