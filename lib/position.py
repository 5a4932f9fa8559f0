"""Positions in attention: sinusoidal encodings, rotary embeddings (RoPE) and ALiBi biases.

Derived in the chapter *Position* (``book/position.md``):

* frequencies: :func:`position_frequencies`, ``ω_i = base^(−2i/d)``, one per pair of
  coordinates;
* sinusoidal encodings added to the embeddings: :func:`sinusoidal_encoding`, and the rotation
  that shifts them, :func:`shift_rotation`;
* rotary embeddings that rotate queries and keys: :func:`rope`, and the same map as a matrix,
  :func:`rope_matrix`;
* linear biases added to the scores: :func:`alibi_slopes`, :func:`alibi_bias`.

Coordinates come in pairs ``(2i, 2i + 1)``, so every dimension ``d`` must be even. Positions
are non-negative numbers (integers in a sequence; fractional after position interpolation).
Rows are vectors, as in the other modules: ``x`` is ``(n, d)`` and position ``n`` rotates row
``n``; a rotation matrix acts on a column, ``R v``.
"""

from __future__ import annotations

import numpy as np

from ._checks import (
    as_matrix,
    as_vector,
    finite_float,
    non_negative_float,
    positive_float,
    positive_int,
)

__all__ = [
    "alibi_bias",
    "alibi_slopes",
    "position_frequencies",
    "rope",
    "rope_matrix",
    "shift_rotation",
    "sinusoidal_encoding",
]


def _even_dim(d) -> int:
    """``d`` as an int if it is a positive even integer, else ``ValueError``."""
    d = positive_int(d, "d")
    if d % 2:
        raise ValueError(f"d must be even (coordinates are rotated in pairs), got d = {d}")
    return d


def _positions(positions) -> np.ndarray:
    """``positions`` as a non-empty, finite, non-negative 1-D float array, else ``ValueError``."""
    pos = as_vector(positions, "positions")
    if pos.min() < 0:
        raise ValueError(f"positions must be non-negative, got {pos.min()!r}")
    return pos


def position_frequencies(d, base: float = 10000.0) -> np.ndarray:
    """The angular frequencies of the ``d/2`` coordinate pairs, a geometric sequence.

    .. math:: \\omega_i = \\text{base}^{-2i/d}, \\qquad i = 0, \\dots, d/2 - 1

    Pair ``i`` turns by ``ω_i`` radians per position, so its wavelength is ``2π / ω_i``,
    from ``2π`` (``i = 0``) to just under ``2π · base``. Shape ``(d/2,)``.
    Derived in {ref}`sec-position-sinusoid`.

    >>> position_frequencies(4, base=100.0).tolist()
    [1.0, 0.1]
    """
    d = _even_dim(d)
    base = positive_float(base, "base")
    return base ** (-np.arange(0, d, 2) / d)


def sinusoidal_encoding(positions, d, base: float = 10000.0) -> np.ndarray:
    """Sinusoidal position encodings of Vaswani et al. (2017), one row per position.

    .. math::
        p_{t,2i} = \\sin(t\\,\\omega_i), \\qquad p_{t,2i+1} = \\cos(t\\,\\omega_i)

    with ``ω_i`` from :func:`position_frequencies`. ``positions`` has shape ``(n,)``; the
    result has shape ``(n, d)``, and every row has squared length ``d/2``.
    Derived in {ref}`sec-position-sinusoid`.

    >>> sinusoidal_encoding([0], 4).tolist()
    [[0.0, 1.0, 0.0, 1.0]]
    """
    pos = _positions(positions)
    angles = pos[:, None] * position_frequencies(d, base)[None, :]  # (n, d/2)
    P = np.empty((pos.size, _even_dim(d)))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles)
    return P


def shift_rotation(delta, d, base: float = 10000.0) -> np.ndarray:
    """The block rotation that moves every sinusoidal encoding ``delta`` positions on.

    .. math::
        p_{t+\\Delta} = R(\\Delta)^\\top p_t, \\qquad
        R(\\Delta)^\\top = \\operatorname{diag}_i \\begin{pmatrix} \\cos \\Delta\\omega_i &
        \\sin \\Delta\\omega_i \\\\ -\\sin \\Delta\\omega_i & \\cos \\Delta\\omega_i
        \\end{pmatrix}

    for every position ``t``; it does not depend on ``t``. ``R(Δ)`` is :func:`rope_matrix`, the
    rotation of RoPE; the transpose appears because an encoding stores each pair as
    (sin, cos), which a growing angle turns clockwise. ``delta`` is any real shift (negative
    moves back). Shape ``(d, d)``, orthogonal. Derived in {ref}`sec-position-sinusoid`.

    >>> np.round(shift_rotation(np.pi / 2, 2, base=1.0), 12).tolist()
    [[0.0, 1.0], [-1.0, 0.0]]
    """
    delta = finite_float(delta, "delta")
    d = _even_dim(d)
    phi = delta * position_frequencies(d, base)
    R = np.zeros((d, d))
    R[0::2, 0::2] = np.diag(np.cos(phi))
    R[0::2, 1::2] = np.diag(np.sin(phi))
    R[1::2, 0::2] = np.diag(-np.sin(phi))
    R[1::2, 1::2] = np.diag(np.cos(phi))
    return R


def rope(x, positions, base: float = 10000.0) -> np.ndarray:
    """Rotary position embedding (Su et al., 2021): turn pair ``i`` of row ``n`` by ``m_n ω_i``.

    .. math::
        \\begin{pmatrix} y_{2i} \\\\ y_{2i+1} \\end{pmatrix} =
        \\begin{pmatrix} \\cos m\\omega_i & -\\sin m\\omega_i \\\\
        \\sin m\\omega_i & \\cos m\\omega_i \\end{pmatrix}
        \\begin{pmatrix} x_{2i} \\\\ x_{2i+1} \\end{pmatrix}

    the real form of :math:`(x_{2i} + \\mathrm{i}\\,x_{2i+1})\\,e^{\\mathrm{i} m \\omega_i}`.
    ``x`` has shape ``(n, d)`` with ``d`` even, ``positions`` shape ``(n,)``; the result has
    the shape of ``x`` and the same row lengths, and ``rope(q, m) · rope(k, n)`` depends on
    ``m − n`` only. Derived in {ref}`sec-position-rope`.

    >>> np.round(rope([[1.0, 0.0]], [np.pi / 2], base=1.0), 12).tolist()
    [[0.0, 1.0]]
    """
    x = as_matrix(x, "x")
    _even_dim(x.shape[1])
    pos = _positions(positions)
    if pos.size != x.shape[0]:
        raise ValueError(f"positions must have one entry per row of x: x has {x.shape[0]} "
                         f"rows but {pos.size} positions were given")
    angles = pos[:, None] * position_frequencies(x.shape[1], base)[None, :]  # (n, d/2)
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[:, 0::2], x[:, 1::2]
    y = np.empty_like(x)
    y[:, 0::2] = even * cos - odd * sin
    y[:, 1::2] = even * sin + odd * cos
    return y


def rope_matrix(m, d, base: float = 10000.0) -> np.ndarray:
    """The ``d × d`` block-diagonal rotation of RoPE at position ``m``, acting on a column.

    .. math::
        \\operatorname{rope}(x, m) = R(m)\\, x, \\qquad R(m)^\\top R(n) = R(n - m)

    so a rotated score is :math:`q^\\top R(m)^\\top R(n)\\, k = q^\\top R(n - m)\\, k`.
    ``R(m)`` is the transpose of :func:`shift_rotation` ``(m, d)``. ``m`` is any real number;
    a negative argument turns the other way, ``R(−Δ) = R(Δ)ᵀ``, so that ``R(n − m)`` is
    defined for every pair of positions. Shape ``(d, d)``. Derived in {ref}`sec-position-rope`.

    >>> np.round(rope_matrix(np.pi / 2, 2, base=1.0), 12).tolist()
    [[0.0, -1.0], [1.0, 0.0]]
    >>> np.round(rope_matrix(-np.pi / 2, 2, base=1.0), 12).tolist()
    [[0.0, 1.0], [-1.0, 0.0]]
    """
    m = finite_float(m, "m")
    return shift_rotation(m, d, base).T


def alibi_slopes(n_heads) -> np.ndarray:
    """The ALiBi slopes of Press et al. (2022), a geometric sequence, one per head.

    .. math:: \\lambda_h = 2^{-8h/H}, \\qquad h = 1, \\dots, H

    the paper's sequence (``H = 8``: 1/2, 1/4, …, 1/256). The authors' code handles a ``H``
    that is not a power of two differently (the slopes of the nearest lower power of two, then
    every other slope of twice that many heads); this function does not. Shape ``(H,)``.
    Derived in {ref}`sec-position-alibi`.

    >>> alibi_slopes(4).tolist()
    [0.25, 0.0625, 0.015625, 0.00390625]
    """
    H = positive_int(n_heads, "n_heads")
    return 2.0 ** (-8.0 * np.arange(1, H + 1) / H)


def alibi_bias(N, slope) -> np.ndarray:
    """The ALiBi bias added to the scores: ``−λ |m − n|``, shape ``(N, N)``.

    .. math:: B_{mn} = -\\lambda\\,|m - n|

    for the query at position ``m`` and the key at ``n``, with ``λ = slope``. Added to the scores
    before the softmax, it multiplies the weight of a key ``Δ`` positions away by ``e^{−λΔ}``: a
    soft mask. In a causal model it is used with :func:`lib.causal_mask`, so only ``n ≤ m``
    matter. Derived in {ref}`sec-position-alibi`.

    >>> alibi_bias(3, 0.5).tolist()
    [[0.0, -0.5, -1.0], [-0.5, 0.0, -0.5], [-1.0, -0.5, 0.0]]
    """
    N = positive_int(N, "N")
    lam = non_negative_float(slope, "slope")
    i = np.arange(N)
    return lam * -np.abs(i[:, None] - i[None, :])  # integer −|m − n|: no −0.0 on the diagonal
