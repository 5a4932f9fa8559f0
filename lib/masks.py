"""Attention masks: which (query, key) pairs may interact, and the softmax restricted to them.

A mask is a boolean array, ``True`` where query ``i`` may attend to key ``j`` (allowed) and
``False`` where it may not (masked). The chapter "Attention masks" derives them.

* :func:`causal_mask`, :func:`padding_mask`, :func:`sliding_window_mask` build masks;
* :func:`masked_softmax` is the softmax over the allowed keys of each row;
* :func:`masked_attention` is scaled dot-product attention with a mask;
* :func:`constant_scores` and :func:`constant_softmax` mask with a finite constant in a given
  floating-point type, as much real code does, rounding, overflow and NaN included.

A row with no allowed key (a fully masked row, e.g. the query of a padding token) has no
softmax: the formula gives 0/0. :func:`masked_softmax` returns a row of zeros there, so the
output of such a query is the zero vector and no gradient flows through it. This is a choice,
documented and tested, not a consequence of the mathematics.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_array, positive_int

__all__ = ["causal_mask", "constant_scores", "constant_softmax", "masked_attention",
           "masked_softmax", "padding_mask", "sliding_window_mask"]


def _as_mask(mask, scores_shape: tuple) -> np.ndarray:
    """``mask`` as a boolean array that broadcasts to ``scores_shape``, or ``ValueError``."""
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise ValueError(
            "mask must be a boolean array (True = allowed, False = masked), "
            f"got dtype {arr.dtype}; an additive mask of 0 and -inf is not accepted here"
        )
    try:
        shape = np.broadcast_shapes(arr.shape, scores_shape)
    except ValueError:
        shape = None
    if shape != tuple(scores_shape):
        raise ValueError(
            f"mask of shape {arr.shape} does not match scores of shape {tuple(scores_shape)} "
            "(it must have the same shape or broadcast to it)"
        )
    return arr


def masked_softmax(scores, mask, axis: int = -1) -> np.ndarray:
    """Softmax of ``scores`` along ``axis`` over the allowed entries only (``mask`` True).

    .. math::
        p_j = \\frac{m_j\\, e^{s_j}}{\\sum_l m_l\\, e^{s_l}}, \\qquad m_j \\in \\{0, 1\\}

    the same as adding :math:`-\\infty` to the masked scores before an ordinary softmax.
    Masked entries get weight exactly 0. ``mask`` is boolean and has the shape of ``scores``
    or broadcasts to it; the result has the shape of ``scores``. A row with no allowed entry
    returns zeros (documented choice: 0/0 is undefined; zeros make a padding query output 0).
    Derived in {ref}`sec-masks-softmax`.

    >>> masked_softmax([1.0, 5.0, 1.0], [True, False, True]).tolist()
    [0.5, 0.0, 0.5]
    >>> masked_softmax([[1.0, 2.0]], [[False, False]]).tolist()
    [[0.0, 0.0]]
    """
    scores = as_array(scores, "scores")
    mask = _as_mask(mask, scores.shape)
    z = np.where(mask, scores, -np.inf)
    top = z.max(axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)  # fully masked row: any finite shift will do
    e = np.exp(z - top)  # exp(-inf) = 0 at the masked entries
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def causal_mask(N: int, n_k: int | None = None) -> np.ndarray:
    """Lower-triangular mask of shape ``(N, N)``: query ``i`` sees keys ``j ≤ i``.

    .. math:: M_{ij} = [\\, j \\le i \\,]

    It allows :math:`N(N+1)/2` of the :math:`N^2` pairs. With ``n_k`` keys the ``N`` queries are
    the last ``N`` positions of a sequence of ``n_k ≥ N`` tokens (decoding with a cache), and the
    mask has shape ``(N, n_k)``: :math:`M_{ij} = [\\, j \\le i + n_k - N \\,]`.

    >>> causal_mask(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> causal_mask(1, 3).astype(int).tolist()
    [[1, 1, 1]]
    """
    N = positive_int(N, "N")
    n_k = N if n_k is None else positive_int(n_k, "n_k")
    if N > n_k:
        raise ValueError(f"causal attention needs N <= n_k (the queries are the last "
                         f"positions), got N = {N} and n_k = {n_k}")
    return np.tri(N, n_k, n_k - N, dtype=bool)


def padding_mask(lengths, N: int, mask_queries: bool = False) -> np.ndarray:
    """Masks of shape ``(B, N, N)`` for a batch padded to length ``N``.

    Sequence ``b`` has ``lengths[b]`` real tokens followed by padding. Keys at padded
    positions are masked. Positions are counted from 0 here, as array indices, so the real
    tokens are ``0, ..., L_b - 1`` (the chapter counts from 1 and writes :math:`j \\le L_b`):

    .. math:: M_{bij} = [\\, j < L_b \\,]

    With ``mask_queries=True`` the rows of padded queries are masked as well,
    :math:`M_{bij} = [\\, i < L_b \\text{ and } j < L_b \\,]`, so those rows are fully masked.

    >>> padding_mask([2], 3)[0].astype(int).tolist()
    [[1, 1, 0], [1, 1, 0], [1, 1, 0]]
    >>> padding_mask([2], 3, mask_queries=True)[0].astype(int).tolist()
    [[1, 1, 0], [1, 1, 0], [0, 0, 0]]
    """
    N = positive_int(N, "N")
    raw = np.asarray(lengths)
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"lengths must be a non-empty 1-D list of integers, got shape {raw.shape}")
    lengths = [positive_int(n, "each length") for n in raw.tolist()]
    if max(lengths) > N:
        raise ValueError(f"a length exceeds the padded length N = {N}: {lengths}")
    L = np.array(lengths)[:, None, None]  # (B, 1, 1)
    pos = np.arange(N)
    keys = pos[None, None, :] < L  # (B, 1, N)
    if not mask_queries:
        return np.broadcast_to(keys, (len(lengths), N, N)).copy()
    return keys & (pos[None, :, None] < L)


def sliding_window_mask(N: int, w: int, causal: bool = True) -> np.ndarray:
    """Mask of shape ``(N, N)`` that lets each query see only the keys within ``w`` of it.

    Causal (default): the query and the ``w - 1`` keys before it,
    :math:`M_{ij} = [\\, 0 \\le i - j < w \\,]`. Symmetric: :math:`M_{ij} = [\\, |i - j| < w \\,]`.
    With ``w ≥ N`` the causal window is the causal mask.

    >>> sliding_window_mask(4, 2).astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    """
    N = positive_int(N, "N")
    w = positive_int(w, "w")
    gap = np.arange(N)[:, None] - np.arange(N)[None, :]  # i - j
    if causal:
        return (gap >= 0) & (gap < w)
    return np.abs(gap) < w


def masked_attention(Q, K, V, mask, scale: bool = True) -> np.ndarray:
    """Scaled dot-product attention with a mask: ``masked_softmax(Q Kᵀ / √d_k, mask) V``.

    .. math:: O = \\operatorname{softmax}\\!\\Big(\\frac{QK^\\top}{\\sqrt{d_k}} + A\\Big) V,
        \\quad A_{ij} = 0 \\text{ if allowed, } -\\infty \\text{ if masked}

    ``Q`` has shape ``(..., N_q, d_k)``, ``K`` ``(..., N_k, d_k)``, ``V`` ``(..., N_k, d_v)``
    (the leading batch axes broadcast); ``mask`` is boolean and broadcasts to ``(..., N_q, N_k)``.
    The result has shape ``(..., N_q, d_v)``; a fully masked query gets the zero vector.

    >>> masked_attention([[0.0], [0.0]], [[1.0], [2.0]], [[2.0], [4.0]],
    ...                  [[True, False], [True, True]]).tolist()
    [[2.0], [3.0]]
    """
    Q = as_array(Q, "Q")
    K = as_array(K, "K")
    V = as_array(V, "V")
    for name, arr in (("Q", Q), ("K", K), ("V", V)):
        if arr.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (tokens, features), "
                             f"got shape {arr.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same dimension d_k, got {Q.shape[-1]} "
                         f"and {K.shape[-1]}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"V must have one row per key: {K.shape[-2]} keys but V has "
                         f"{V.shape[-2]} rows")
    S = Q @ np.swapaxes(K, -1, -2)  # (..., N_q, N_k)
    if scale:
        S = S / np.sqrt(Q.shape[-1])
    return masked_softmax(S, mask, axis=-1) @ V


def constant_scores(scores, mask, c, dtype, replace: bool = False) -> np.ndarray:
    """The scores in type ``dtype`` with a finite mask constant ``c`` added to the masked ones
    (``mask`` False), or replacing them (``replace=True``); ``c=None`` is ``finfo(dtype).min``.

    .. math:: \\operatorname{fl}(z_j + c) \\text{ (added)}, \\qquad
        \\operatorname{fl}(c) \\text{ (replaced)}, \\qquad j \\text{ masked}

    Nothing is checked or repaired: a sum that overflows is ``-inf``, as in the code this
    imitates. Derived in {ref}`sec-masks-constants`.

    >>> constant_scores(np.array([1.0, 2.0]), np.array([True, False]), -1e4, np.float16).tolist()
    [1.0, -10000.0]
    >>> constant_scores(np.array([1.0, -20.0]), np.array([True, False]), None, np.float16).tolist()
    [1.0, -inf]
    """
    scores = np.asarray(scores, dtype=float)
    mask = _as_mask(mask, scores.shape)
    with np.errstate(over="ignore"):
        c = np.finfo(dtype).min if c is None else dtype(c)
        z = scores.astype(dtype)
        return np.where(mask, z, c if replace else z + c)


def constant_softmax(scores, mask, c, dtype, replace: bool = False,
                     softmax_dtype=None) -> np.ndarray:
    """Softmax on the last axis, computed in ``softmax_dtype`` (default ``dtype``), of
    :func:`constant_scores`: the mask is applied in ``dtype``, the exponentials in
    ``softmax_dtype`` (real code often adds the mask in float16 and exponentiates in float32).

    A row whose entries are all ``-inf`` gives NaN, as a plain softmax does.

    >>> constant_softmax(np.zeros(2), np.array([True, False]), -10.0, np.float64).round(6).tolist()
    [0.999955, 4.5e-05]
    >>> constant_softmax(np.zeros(2), np.zeros(2, dtype=bool), -np.inf, np.float32).tolist()
    [nan, nan]
    """
    x = constant_scores(scores, mask, c, dtype, replace).astype(softmax_dtype or dtype)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
