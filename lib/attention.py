"""Softmax, its Jacobian, the two-key sigmoid, and scaled dot-product attention.

Rows are vectors, as in the chapters: ``Q`` is ``(n_q, d_k)``, ``K`` is ``(n_k, d_k)``, the
scores are ``S = Q Kᵀ`` and the softmax acts along the last axis. Every function validates its
input through :mod:`lib._checks` and raises ``ValueError`` with a message that says what is
wrong (wrong shape, empty input, NaN, non-positive temperature).
"""

from __future__ import annotations

import numpy as np

from ._checks import as_array, as_finite, as_matrix, as_vector, positive_float, same_length

__all__ = [
    "attention",
    "attention_weights",
    "numerical_jacobian",
    "scores",
    "sigmoid",
    "sigmoid_slope",
    "softmax",
    "softmax_jacobian",
]


def softmax(z, temperature: float = 1.0, axis: int = -1) -> np.ndarray:
    """Turn scores into probabilities along ``axis``.

    .. math:: p_i = \\frac{e^{z_i / T}}{\\sum_j e^{z_j / T}}

    The maximum is subtracted first (softmax only sees differences of scores), so large
    scores do not overflow. Derived in {ref}`sec-why-sqrt-dk`.

    >>> softmax([0.0, 0.0]).tolist()
    [0.5, 0.5]
    """
    z = as_array(z, "z") / positive_float(temperature, "temperature")
    shifted = z - z.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_jacobian(z, temperature: float = 1.0) -> np.ndarray:
    """Jacobian of the softmax with respect to the scores, ``J[i, j] = dp_i / dz_j``.

    .. math:: J = \\frac{1}{T}\\left(\\operatorname{diag}(p) - p p^\\top\\right)

    ``z`` has shape ``(m,)``; the result has shape ``(m, m)``, is symmetric, positive
    semi-definite, and its rows sum to zero. Derived in {ref}`sec-saturation`.

    >>> softmax_jacobian([0.0, 0.0]).tolist()
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    z = as_vector(z, "z")
    t = positive_float(temperature, "temperature")
    p = softmax(z, temperature=t)
    return (np.diag(p) - np.outer(p, p)) / t


def numerical_jacobian(f, z, eps: float = 1e-6) -> np.ndarray:
    """Central finite-difference Jacobian of a vector function ``f`` at ``z``.

    .. math::
        J[:, j] \\approx \\frac{f(z + \\varepsilon e_j) - f(z - \\varepsilon e_j)}{2\\varepsilon}

    >>> np.round(numerical_jacobian(softmax, [0.0, 0.0]), 6).tolist()
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    z = as_vector(z, "z")
    eps = positive_float(eps, "eps")
    columns = []
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = eps
        columns.append((np.asarray(f(z + step)) - np.asarray(f(z - step))) / (2 * eps))
    return np.stack(columns, axis=-1)


def sigmoid(x) -> np.ndarray:
    """Logistic function, the two-key softmax seen as a function of the gap.

    .. math:: \\operatorname{sigmoid}(\\Delta) = \\frac{1}{1 + e^{-\\Delta}}
              = \\operatorname{softmax}(\\Delta, 0)_1

    Computed without overflow for large ``|x|``; ``x`` may be a scalar or an array. Derived in
    {ref}`sec-saturation`.

    >>> float(sigmoid(0.0))
    0.5
    """
    return np.exp(-np.logaddexp(0.0, -as_finite(x, "x")))


def sigmoid_slope(x) -> np.ndarray:
    """Derivative of the sigmoid, ``p(1 - p)`` with ``p = sigmoid(x)``.

    .. math:: \\frac{dp}{d\\Delta} = p (1 - p) = \\frac{1}{4 \\cosh^2(\\Delta / 2)}

    Derived in {ref}`sec-saturation`.

    >>> float(sigmoid_slope(0.0))
    0.25
    """
    p = sigmoid(x)
    return p * (1.0 - p)


def scores(Q, K, scale: bool = True) -> np.ndarray:
    """Attention scores ``S = Q Kᵀ``, divided by ``√d_k`` when ``scale`` is true.

    .. math:: S_{ij} = \\frac{q_i \\cdot k_j}{\\sqrt{d_k}}

    ``Q`` has shape ``(n_q, d_k)`` and ``K`` shape ``(n_k, d_k)``; the result is ``(n_q, n_k)``.

    >>> scores([[1.0, 0.0]], [[2.0, 0.0], [0.0, 1.0]], scale=False).tolist()
    [[2.0, 0.0]]
    """
    Q = as_matrix(Q, "Q")
    K = as_matrix(K, "K")
    same_length(Q, K, "Q and K")
    S = Q @ K.T
    return S / np.sqrt(Q.shape[1]) if scale else S


def attention_weights(Q, K, scale: bool = True) -> np.ndarray:
    """Row-wise softmax of the scores: ``softmax(Q Kᵀ / √d_k)``, shape ``(n_q, n_k)``.

    >>> attention_weights([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]).tolist()
    [[0.5, 0.5]]
    """
    return softmax(scores(Q, K, scale=scale), axis=-1)


def attention(Q, K, V, scale: bool = True) -> np.ndarray:
    """Scaled dot-product attention, ``softmax(Q Kᵀ / √d_k) V``.

    ``V`` has shape ``(n_k, d_v)``; the result has shape ``(n_q, d_v)``.

    >>> attention([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0], [4.0]]).tolist()
    [[3.0]]
    """
    W = attention_weights(Q, K, scale=scale)
    V = as_matrix(V, "V")
    if V.shape[0] != W.shape[1]:
        raise ValueError(
            f"V must have one row per key: {W.shape[1]} keys but V has {V.shape[0]} rows"
        )
    return W @ V
