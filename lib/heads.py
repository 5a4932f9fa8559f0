"""A full attention layer: heads, their output projection, their circuits, and stacks of layers.

Derived in the chapter "Many heads and the value path" ({ref}`sec-heads`). Rows are tokens:
``X`` is ``(N, d)``, a layer's weights are ``W_Q, W_K, W_V`` of shape ``(d, h d_k)`` and ``W_O``
of shape ``(h d_k, d_out)``, and head ``i`` owns the columns ``i d_k … (i + 1) d_k − 1`` of
``W_Q, W_K, W_V`` and the same rows of ``W_O``.

* :func:`split_heads`, :func:`merge_heads` cut the columns into heads and concatenate them back;
* :func:`multi_head_attention` is ``Concat(head_1, …, head_h) W_O``, and :func:`head_outputs`
  the same layer written as a sum over heads, ``Σ_i P_i V_i W_O^(i)``;
* :func:`head_circuits` gives each head's QK circuit ``W_Q^(i) W_K^(i)ᵀ`` and OV circuit
  ``W_V^(i) W_O^(i)``;
* :func:`attention_parameters` counts the weights;
* :func:`readout_error` is the exact mean squared error of a linear task solved by heads;
* :func:`two_offset_layer`, :func:`two_offset_weights`, :func:`two_offset_targets` and
  :func:`two_offset_error` are the chapter's toy task (copy the tokens one and two steps back);
* :func:`rank_one_residual` and :func:`attention_stack` measure and produce rank collapse.

The attention itself is :func:`lib.masks.masked_attention` (all pairs allowed unless a mask is
given), so the softmax, the scaling by ``√d_k`` and the checks are those of :mod:`lib.masks`.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_matrix, as_stack, finite_float, positive_float, positive_int
from .attention import softmax
from .masks import masked_attention

__all__ = ["attention_parameters", "attention_stack", "head_circuits", "head_outputs",
           "merge_heads", "multi_head_attention", "rank_one_residual", "readout_error",
           "split_heads", "two_offset_error", "two_offset_layer", "two_offset_targets",
           "two_offset_weights", "TASK_TOKENS", "TASK_WIDTH"]


def _width(d: int, n_heads, what: str) -> int:
    """``d // n_heads``, or ``ValueError`` if ``n_heads`` is not a positive divisor of ``d``."""
    h = positive_int(n_heads, "n_heads")
    if d % h:
        raise ValueError(f"n_heads = {h} must divide {what} = {d}")
    return d // h


def split_heads(A, n_heads: int) -> np.ndarray:
    """Cut the columns of ``A`` into ``n_heads`` consecutive blocks, one per head.

    .. math:: A = [A^{(1)} \\; A^{(2)} \\; \\cdots \\; A^{(h)}], \\qquad
              A^{(i)} = A[:, (i-1) d_k : i\\, d_k], \\quad d_k = d / h

    ``A`` has shape ``(N, d)`` (for instance ``X W_Q``, or ``W_Q`` itself); the result has shape
    ``(h, N, d_k)``. ``h`` must divide ``d``. Derived in {ref}`sec-heads-many`.

    >>> split_heads([[1.0, 2.0, 3.0, 4.0]], 2).tolist()
    [[[1.0, 2.0]], [[3.0, 4.0]]]
    """
    A = as_matrix(A, "A")
    d_k = _width(A.shape[1], n_heads, "the number of columns")
    return A.reshape(A.shape[0], -1, d_k).transpose(1, 0, 2)  # (h, N, d_k)


def merge_heads(H) -> np.ndarray:
    """Concatenate the heads' outputs side by side: ``(h, N, d_k)`` to ``(N, h d_k)``.

    .. math:: \\operatorname{Concat}(H^{(1)}, \\dots, H^{(h)}) = [H^{(1)} \\; \\cdots \\; H^{(h)}]

    The inverse of :func:`split_heads`. Derived in {ref}`sec-heads-many`.

    >>> merge_heads([[[1.0, 2.0]], [[3.0, 4.0]]]).tolist()
    [[1.0, 2.0, 3.0, 4.0]]
    """
    H = as_stack(H, "H")
    return H.transpose(1, 0, 2).reshape(H.shape[1], -1)


def _weights(W_Q, W_K, W_V, W_O, n_heads):
    """Validated weights of one layer; ``n_heads`` must divide their ``h d_k`` columns."""
    W_Q, W_K, W_V, W_O = (as_matrix(W, name) for W, name in
                          ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V"), (W_O, "W_O")))
    if not (W_Q.shape[0] == W_K.shape[0] == W_V.shape[0]):
        raise ValueError(f"W_Q, W_K and W_V must have the same number of rows d, got "
                         f"{W_Q.shape[0]}, {W_K.shape[0]} and {W_V.shape[0]}")
    if W_Q.shape[1] != W_K.shape[1]:
        raise ValueError(f"W_Q and W_K must have the same number of columns h d_k, got "
                         f"{W_Q.shape[1]} and {W_K.shape[1]}")
    if W_O.shape[0] != W_V.shape[1]:
        raise ValueError(f"W_O must have one row per column of W_V: W_V has {W_V.shape[1]} "
                         f"columns but W_O has {W_O.shape[0]} rows")
    _width(W_Q.shape[1], n_heads, "the columns of W_Q and W_K")
    _width(W_V.shape[1], n_heads, "the columns of W_V")
    return W_Q, W_K, W_V, W_O


def _output_blocks(W_O, n_heads) -> np.ndarray:
    """``W_O`` cut into the rows that belong to each head: ``(h, d_v, d_out)``."""
    return split_heads(W_O.T, n_heads).transpose(0, 2, 1)


def _heads(X, W_Q, W_K, W_V, W_O, n_heads, mask):
    """Each head's output ``P_i V_i`` (h, N, d_v) and ``W_O`` cut into its rows (h, d_v, d_out)."""
    X = as_matrix(X, "X")
    W_Q, W_K, W_V, W_O = _weights(W_Q, W_K, W_V, W_O, n_heads)
    if X.shape[1] != W_Q.shape[0]:
        raise ValueError(f"the weights must have one row per feature of X: X has "
                         f"{X.shape[1]} features but the weights have {W_Q.shape[0]} rows")
    N = X.shape[0]
    mask = np.ones((N, N), dtype=bool) if mask is None else mask
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_Q, W_K, W_V))  # (h, N, d_k), (h, N, d_v)
    heads = masked_attention(Q, K, V, mask)  # (h, N, d_v): softmax(Q_i K_iᵀ / √d_k) V_i
    return heads, _output_blocks(W_O, n_heads)  # W_O^(i): (h, d_v, d_out)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, n_heads: int, mask=None) -> np.ndarray:
    """Multi-head self-attention: the heads' outputs concatenated, times ``W_O``.

    .. math:: \\operatorname{MHA}(X) = \\operatorname{Concat}(P_1 V_1, \\dots, P_h V_h)\\, W_O,
        \\quad P_i = \\operatorname{softmax}\\!\\Big(\\frac{Q_i K_i^\\top}{\\sqrt{d_k}}\\Big),
        \\quad Q_i = X W_Q^{(i)},\\ K_i = X W_K^{(i)},\\ V_i = X W_V^{(i)}

    ``X`` is ``(N, d)``, ``W_Q`` and ``W_K`` are ``(d, h d_k)``, ``W_V`` is ``(d, h d_v)`` and
    ``W_O`` is ``(h d_v, d_out)``; the result is ``(N, d_out)``. ``n_heads`` must divide the
    columns of the weights. ``mask`` (boolean, broadcasting to ``(N, N)``) restricts the pairs
    as in :func:`lib.masks.masked_attention`. Derived in {ref}`sec-heads-many`.

    >>> X, zero = [[1.0, 0.0], [0.0, 1.0]], np.zeros((2, 2))
    >>> multi_head_attention(X, zero, zero, np.eye(2), np.eye(2), 2).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    heads, _ = _heads(X, W_Q, W_K, W_V, W_O, n_heads, mask)
    return merge_heads(heads) @ as_matrix(W_O, "W_O")


def head_outputs(X, W_Q, W_K, W_V, W_O, n_heads: int, mask=None) -> np.ndarray:
    """What each head adds to the layer's output: ``P_i V_i W_O^(i)``, shape ``(h, N, d_out)``.

    .. math:: \\operatorname{MHA}(X) = \\sum_{i=1}^{h} P_i V_i W_O^{(i)}, \\qquad
              W_O^{(i)} = W_O[(i-1) d_v : i\\, d_v, :]

    Same arguments as :func:`multi_head_attention`; summed over the first axis the result is
    that function's output. Derived in {ref}`sec-heads-many`.

    >>> X = [[1.0, 0.0], [0.0, 1.0]]
    >>> head_outputs(X, np.zeros((2, 2)), np.zeros((2, 2)), np.eye(2), np.eye(2), 2).tolist()
    [[[0.5, 0.0], [0.5, 0.0]], [[0.0, 0.5], [0.0, 0.5]]]
    """
    heads, W_O_heads = _heads(X, W_Q, W_K, W_V, W_O, n_heads, mask)
    return heads @ W_O_heads  # (h, N, d_v) @ (h, d_v, d_out)


def head_circuits(W_Q, W_K, W_V, W_O, n_heads: int) -> tuple[np.ndarray, np.ndarray]:
    """Each head's QK circuit ``W_Q^(i) W_K^(i)ᵀ`` and OV circuit ``W_V^(i) W_O^(i)``.

    .. math:: s^{(i)}_{tj} = \\frac{x_t\\, W_Q^{(i)} W_K^{(i)\\top} x_j^\\top}{\\sqrt{d_k}},
        \\qquad P_i V_i W_O^{(i)} = P_i X\\, W_V^{(i)} W_O^{(i)}

    Returns two arrays of shape ``(h, d, d)`` and ``(h, d, d_out)``: where head ``i`` looks
    (a bilinear form of rank at most ``d_k``) and what it moves (a map of rank at most
    ``d_v``). Derived in {ref}`sec-heads-circuits`.

    >>> QK, OV = head_circuits(np.eye(2), np.eye(2), np.eye(2), np.eye(2), 2)
    >>> QK[0].tolist(), OV[1].tolist()
    ([[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]])
    """
    W_Q, W_K, W_V, W_O = _weights(W_Q, W_K, W_V, W_O, n_heads)
    Wq, Wk, Wv = (split_heads(W, n_heads) for W in (W_Q, W_K, W_V))  # (h, d, d_k), (h, d, d_v)
    Wo = _output_blocks(W_O, n_heads)  # (h, d_v, d_out)
    return Wq @ Wk.transpose(0, 2, 1), Wv @ Wo


def attention_parameters(d_model: int, n_heads: int, d_head: int | None = None) -> dict[str, int]:
    """Number of weights of one attention layer with ``h`` heads of width ``d_head``.

    .. math:: \\underbrace{3\\, d\\, h\\, d_k}_{W_Q, W_K, W_V} + \\underbrace{h\\, d_k\\, d}_{W_O}
              = 4 d^2 \\quad\\text{when } d_k = d / h

    ``d_head`` defaults to ``d_model / n_heads`` (which must then be an integer); biases are
    left out. Returns a dict with ``"W_Q"``, ``"W_K"``, ``"W_V"``, ``"W_O"`` and ``"total"``.
    Derived in {ref}`sec-heads-cost`.

    >>> attention_parameters(512, 8)["total"] == 4 * 512**2
    True
    """
    d = positive_int(d_model, "d_model")
    h = positive_int(n_heads, "n_heads")
    d_k = _width(d, h, "d_model") if d_head is None else positive_int(d_head, "d_head")
    counts = {"W_Q": d * h * d_k, "W_K": d * h * d_k, "W_V": d * h * d_k, "W_O": h * d_k * d}
    counts["total"] = sum(counts.values())
    return counts


def readout_error(weights, maps, targets) -> float:
    """Mean squared error of heads on a linear task, for tokens with uncorrelated unit features.

    The heads' output for one query is :math:`o = \\sum_i \\sum_j p_{ij}\\, x_j W^{(i)}` and the
    target is :math:`y = \\sum_j x_j T_j`. If the tokens :math:`x_j` are independent of each
    other and of the weights, with mean 0 and :math:`\\mathbb{E}[x_j^\\top x_j] = I`,

    .. math:: \\mathbb{E}\\,\\lVert o - y \\rVert^2
              = \\sum_j \\Big\\lVert \\sum_i p_{ij} W^{(i)} - T_j \\Big\\rVert_F^2 .

    ``weights`` is ``(h, n)`` (each head's row of attention weights), ``maps`` is
    ``(h, d, m)`` (each head's OV circuit) and ``targets`` is ``(n, d, m)``. Derived in
    {ref}`sec-heads-two`.

    >>> readout_error([[0.5, 0.5]], [np.eye(1)], [np.eye(1), np.zeros((1, 1))])
    0.5
    """
    P = as_matrix(weights, "weights")
    W = as_stack(maps, "maps")
    T = as_stack(targets, "targets")
    if W.shape[0] != P.shape[0]:
        raise ValueError(f"one map per head: {P.shape[0]} rows of weights but {W.shape[0]} maps")
    if T.shape[0] != P.shape[1]:
        raise ValueError(f"one target map per key: {P.shape[1]} keys but {T.shape[0]} targets")
    if T.shape[1:] != W.shape[1:]:
        raise ValueError(f"maps and targets must have the same shape (d, m), got "
                         f"{W.shape[1:]} and {T.shape[1:]}")
    E = np.einsum("ij,idm->jdm", P, W) - T  # (n, d, m): the error's map for each token
    return float(np.sum(E**2))


def rank_one_residual(X) -> float:
    """Frobenius distance from ``X`` to the nearest matrix whose rows are all equal.

    .. math:: \\operatorname{res}(X) = \\min_{x} \\lVert X - \\mathbf{1} x^\\top \\rVert_F
              = \\lVert X - \\mathbf{1} \\bar x^\\top \\rVert_F, \\qquad
              \\bar x = \\tfrac1N X^\\top \\mathbf{1}

    The minimum is at the mean row :math:`\\bar x`. ``X`` is ``(N, d)``; 0 exactly when every
    token carries the same vector (rank collapse). Derived in {ref}`sec-heads-collapse`.

    >>> rank_one_residual([[1.0, 2.0], [1.0, 2.0]]), rank_one_residual([[1.0], [-1.0]])
    (0.0, 1.4142135623730951)
    """
    X = as_matrix(X, "X")
    return float(np.sqrt(np.sum((X - X.mean(axis=0)) ** 2)))


def attention_stack(X, W_Q, W_K, W_V, residual: bool = False,
                    temperature: float = 1.0) -> np.ndarray:
    """Run ``X`` through ``L`` single-head attention layers, with or without a skip connection.

    .. math:: X_{l+1} = P_l X_l W_V^{(l)} \\;(+ X_l \\text{ if residual}), \\qquad
              P_l = \\operatorname{softmax}\\!\\Big(\\frac{X_l W_Q^{(l)} (X_l W_K^{(l)})^\\top}
              {T \\sqrt{d_k}}\\Big)

    No MLP, no layer norm: pure attention. ``X`` is ``(N, d)``, ``W_Q`` and ``W_K`` are
    ``(L, d, d_k)`` and ``W_V`` is ``(L, d, d)``. Returns ``X_0, …, X_L`` as ``(L + 1, N, d)``.
    Derived in {ref}`sec-heads-collapse`.

    >>> Xs = attention_stack(np.eye(2), np.zeros((1, 2, 2)), np.zeros((1, 2, 2)), np.eye(2)[None])
    >>> Xs[1].tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    X = as_matrix(X, "X")
    W_Q, W_K, W_V = as_stack(W_Q, "W_Q"), as_stack(W_K, "W_K"), as_stack(W_V, "W_V")
    T = positive_float(temperature, "temperature")
    d = X.shape[1]
    if not (W_Q.shape[0] == W_K.shape[0] == W_V.shape[0]):
        raise ValueError(f"W_Q, W_K and W_V must hold the same number of layers, got "
                         f"{W_Q.shape[0]}, {W_K.shape[0]} and {W_V.shape[0]}")
    if W_Q.shape[1:] != W_K.shape[1:] or W_Q.shape[1] != d:
        raise ValueError(f"W_Q and W_K must be (L, d, d_k) with d = {d}, got {W_Q.shape} "
                         f"and {W_K.shape}")
    if W_V.shape[1:] != (d, d):
        raise ValueError(f"W_V must be (L, d, d) with d = {d}, got {W_V.shape}")
    d_k = W_Q.shape[2]
    out = [X]
    for Wq, Wk, Wv in zip(W_Q, W_K, W_V, strict=True):
        S = (X @ Wq) @ (X @ Wk).T / (T * np.sqrt(d_k))  # (N, N)
        Y = softmax(S) @ X @ Wv  # P X W_V
        X = X + Y if residual else Y
        out.append(X)
    return np.stack(out)



#: The two-offset task: the number of tokens and the width d_c of a token's content.
TASK_TOKENS, TASK_WIDTH = 8, 8


def _task_heads(n_heads) -> list[tuple[int, ...]]:
    """The offsets each head looks for: one head both, or one offset per head."""
    h = positive_int(n_heads, "n_heads")
    if h not in (1, 2):
        raise ValueError(f"the two-offset task has one or two heads, got n_heads = {h}")
    return [(1, 2)] if h == 1 else [(1,), (2,)]


def two_offset_weights(n_heads: int, beta: float) -> np.ndarray:
    """Each head's weights for one query of the two-offset task, over the keys at offsets 0 … N−1.

    A head scores the keys at its offsets ``β`` and every other key 0, so its row is
    ``softmax(β 1_offsets)``, the same for every query. Returns ``(h, N)``. Derived in
    {ref}`sec-heads-two`.

    >>> two_offset_weights(2, 0.0)[0].tolist() == [1 / 8] * 8
    True
    """
    b = finite_float(beta, "beta")
    rows = []
    for offsets in _task_heads(n_heads):
        s = np.zeros(TASK_TOKENS)
        s[list(offsets)] = b
        rows.append(softmax(s))
    return np.array(rows)


def two_offset_targets() -> np.ndarray:
    """The target maps of the two-offset task, one per key offset: ``(N, d_c, 2 d_c)``.

    .. math:: y_t = [\\,c_{t-1} \\;\\; c_{t-2}\\,] = c_{t-1} A + c_{t-2} B,
              \\qquad A = [\\,I \\;\\; 0\\,],\\ B = [\\,0 \\;\\; I\\,]

    Entry ``k`` is the map applied to the content of the key ``k`` steps back: ``A`` for
    ``k = 1``, ``B`` for ``k = 2``, zero otherwise. Derived in {ref}`sec-heads-two`.

    >>> T = two_offset_targets(); T.shape, float(T[1].sum()), float(T[0].sum())
    ((8, 8, 16), 8.0, 0.0)
    """
    d_c = TASK_WIDTH
    T = np.zeros((TASK_TOKENS, d_c, 2 * d_c))
    T[1, :, :d_c] = np.eye(d_c)
    T[2, :, d_c:] = np.eye(d_c)
    return T


def two_offset_layer(n_heads: int, beta: float):
    """``W_Q, W_K, W_V, W_O`` of the two-offset task: positional scores, content values.

    A token is ``x_j = [c_j | e_j]``, its content (``d_c = 8``) then its one-hot position
    (``N = 8``), so ``d = 16``. Head ``i`` scores key ``t − k`` at ``β`` for its offsets
    ``k`` (one head: 1 and 2; two heads: 1 for head 1, 2 for head 2) and every other key at 0;
    its values are the contents. Two heads write into the first and the second half of the
    output; one head uses the best map for its weights,
    ``W = (aA + bB) / Σ_j p_j²``. ``W_O`` is ``(d, 2 d_c)``. Derived in {ref}`sec-heads-two`.

    >>> W_Q, W_K, W_V, W_O = two_offset_layer(2, 4.0); W_Q.shape, W_O.shape
    ((16, 16), (16, 16))
    """
    heads = _task_heads(n_heads)
    b = finite_float(beta, "beta")
    n, d_c = TASK_TOKENS, TASK_WIDTH
    d = d_c + n
    d_k = d // len(heads)
    W_Q, W_K, W_V = np.zeros((3, d, d))
    for i, offsets in enumerate(heads):
        for t in range(n):
            W_K[d_c + t, i * d_k + t] = 1.0  # key of position t: its one-hot position
            for k in offsets:  # query of position t: the positions t - k, scaled by beta
                W_Q[d_c + t, i * d_k + (t - k) % n] = b * np.sqrt(d_k)
        W_V[:d_c, i * d_k:i * d_k + d_c] = np.eye(d_c)  # value: the content
    T = two_offset_targets()
    W_O = np.zeros((d, 2 * d_c))
    if len(heads) == 2:
        W_O[:d_c], W_O[d_k:d_k + d_c] = T[1], T[2]
    else:
        p = two_offset_weights(1, b)[0]
        W_O[:d_c] = (p[1] * T[1] + p[2] * T[2]) / np.sum(p**2)
    return W_Q, W_K, W_V, W_O


def two_offset_error(n_heads: int, beta: float) -> float:
    """Exact relative error of :func:`two_offset_layer`: ``E‖o − y‖² / E‖y‖²``, ``E‖y‖² = 2 d_c``.

    Computed by :func:`readout_error` from each head's weights and OV circuit restricted to
    the contents. Derived in {ref}`sec-heads-two`.

    >>> round(two_offset_error(1, 0.0), 4), round(two_offset_error(2, 0.0), 4)
    (0.875, 0.875)
    """
    W_Q, W_K, W_V, W_O = two_offset_layer(n_heads, beta)
    _, OV = head_circuits(W_Q, W_K, W_V, W_O, n_heads)
    maps = OV[:, :TASK_WIDTH]  # what each head moves from a token's content
    return readout_error(two_offset_weights(n_heads, beta), maps, two_offset_targets()) / (
        2 * TASK_WIDTH)
