"""The cost of attention: work and memory counts, and exact attention in linear extra memory.

Derived in the chapter "The quadratic cost of attention" ({ref}`sec-cost`):

* counts of one transformer layer: :func:`layer_flops`, :func:`crossover_length`,
  :func:`decode_flops`, :func:`kv_cache_bytes`, :func:`attention_bytes`;
* the mechanisms: :func:`attention` (straightforward, with an optional mask, its softmax
  :func:`softmax_rows` in place),
  :func:`online_normalizer` and :func:`online_softmax` (one pass over the scores),
  :func:`tiled_attention` (blocks of queries and keys, never the whole score matrix),
  and the masks it uses, from :mod:`lib.masks` (:func:`~lib.masks.causal_mask`).

FLOPs count a multiplication and an addition as two operations, so a product of an
``(m, k)`` and a ``(k, n)`` matrix costs ``2 m k n``. The attention functions keep the
floating-point type of their inputs (``float32`` stays ``float32``), so that the chapter can
measure them at the precision models run in; integer inputs become ``float64``.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import as_float_matrix, positive_int

#: Re-exported by ``lib``. ``attention`` stays in this module (``lib.cost.attention``): the
#: name belongs to ``lib.attention.attention``. Masks come from :mod:`lib.masks`.
__all__ = ["attention_bytes", "crossover_length", "decode_flops", "kv_cache_bytes",
           "layer_flops", "on_chip", "online_normalizer", "online_softmax", "outer_block",
           "pairwise_share", "softmax_rows", "tiled_attention"]

#: Operations per score in the softmax: a comparison for the maximum, a subtraction, an
#: exponential (counted as one operation), an addition for the sum and a division.
SOFTMAX_OPS = 5


# -- validation ---------------------------------------------------------------------------------

def _qkv(Q, K, V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``Q (n_q, d_k)``, ``K (n_k, d_k)``, ``V (n_k, d_v)`` in one common float type."""
    Q, K, V = as_float_matrix(Q, "Q"), as_float_matrix(K, "K"), as_float_matrix(V, "V")
    if Q.shape[1] != K.shape[1]:
        raise ValueError(
            f"Q and K must have the same width d_k, got {Q.shape[1]} and {K.shape[1]}")
    if K.shape[0] != V.shape[0]:
        raise ValueError(
            f"V must have one row per key: {K.shape[0]} keys but V has {V.shape[0]} rows")
    dtype = np.result_type(Q, K, V)
    return Q.astype(dtype, copy=False), K.astype(dtype, copy=False), V.astype(dtype, copy=False)


def _count(n, name: str) -> int:
    """A non-negative integer count (a number of tokens may be 0 in a sum)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {n!r}")
    return int(n)


def _heads(d_model, n_heads) -> tuple[int, int]:
    d_model, n_heads = positive_int(d_model, "d_model"), positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} must divide d_model = {d_model}")
    return d_model, n_heads


# -- counting the work --------------------------------------------------------------------------

def layer_flops(n_tokens: int, d_model: int, n_heads: int, d_ff: int | None = None,
                causal: bool = False) -> dict[str, int]:
    """FLOPs of one transformer layer's forward pass on ``n_tokens`` tokens, part by part.

    With ``N = n_tokens``, ``d = d_model``, ``h = n_heads`` and ``P`` the number of
    (query, key) pairs scored (``N²``, or ``N(N + 1)/2`` when ``causal``)::

        projections   8 N d²       Q, K, V and the output projection, 2 N d² each
        scores        2 P d        h heads, 2 P d_k each, d_k = d / h
        softmax       5 h P        SOFTMAX_OPS per score
        weighted_sum  2 P d        the weights times V, in every head
        mlp           4 N d d_ff   two products, N×d by d×d_ff and back (d_ff = 4d: 16 N d²)

    Biases, the 1/√d_k scaling, layer norms, residual additions and the MLP's activation
    cost O(N d) and are left out. Returns a dict of exact integers. Derived in
    {ref}`sec-cost-count`.

    >>> f = layer_flops(1024, 768, 12)
    >>> f["scores"] == 2 * 1024**2 * 768, f["mlp"] == 16 * 1024 * 768**2
    (True, True)
    """
    n = positive_int(n_tokens, "n_tokens")
    d, h = _heads(d_model, n_heads)
    d_ff = 4 * d if d_ff is None else positive_int(d_ff, "d_ff")
    pairs = n * (n + 1) // 2 if causal else n * n
    return {"projections": 8 * n * d * d, "scores": 2 * pairs * d,
            "softmax": SOFTMAX_OPS * h * pairs, "weighted_sum": 2 * pairs * d,
            "mlp": 4 * n * d * d_ff}


def crossover_length(d_model: int, n_heads: int, d_ff: int | None = None,
                     against: str = "projections", causal: bool = False) -> float:
    """The sequence length at which attention's pairwise work equals the layer's linear work.

    The pairwise work (scores, softmax, weighted sum) is ``(4d + 5h) P`` and the linear work
    ``L N``, with ``L = 8 d²`` (``against="projections"``) or ``L = 8 d² + 4 d d_ff``
    (``against="layer"``: projections and MLP). With ``P = N²`` they are equal at

    .. math:: N^* = \\frac{L}{4d + 5h} \\approx \\frac{2d}{1 + 5/(4 d_k)}
              \\quad\\text{(projections)},

    about ``2d`` against the projections and ``6d`` against the whole layer (with
    ``d_ff = 4d``). With ``causal`` (``P = N(N + 1)/2``), ``N* = 2L/(4d + 5h) - 1``.
    Derived in {ref}`sec-cost-count`.

    >>> round(crossover_length(768, 12), 1), round(crossover_length(768, 12, against="layer"))
    (1506.6, 4520)
    """
    d, h = _heads(d_model, n_heads)
    d_ff = 4 * d if d_ff is None else positive_int(d_ff, "d_ff")
    if against not in ("projections", "layer"):
        raise ValueError(f"against must be 'projections' or 'layer', got {against!r}")
    linear = 8 * d * d + (4 * d * d_ff if against == "layer" else 0)
    per_pair = 4 * d + SOFTMAX_OPS * h
    return 2 * linear / per_pair - 1 if causal else linear / per_pair


def decode_flops(t: int, d_model: int, n_heads: int, d_ff: int | None = None,
                 cache: bool = True) -> int:
    """FLOPs of one layer to produce token ``t`` (1-based: ``t`` tokens in the context).

    With a KV cache only the new token is projected and its query is scored against the
    ``t`` cached keys: ``(8 d² + 4 d d_ff) + (4d + 5h) t``, linear in ``t``. Without a cache
    the whole prefix goes through the layer again, a causal forward pass over ``t`` tokens:
    ``(8 d² + 4 d d_ff) t + (4d + 5h) t(t + 1)/2``, quadratic in ``t``. Derived in
    {ref}`sec-cost-decode`.

    >>> decode_flops(1, 64, 1) == decode_flops(1, 64, 1, cache=False)
    True
    """
    t = positive_int(t, "t")
    d, h = _heads(d_model, n_heads)
    d_ff = 4 * d if d_ff is None else positive_int(d_ff, "d_ff")
    linear = 8 * d * d + 4 * d * d_ff
    per_pair = 4 * d + SOFTMAX_OPS * h
    if cache:
        return linear + per_pair * t
    return linear * t + per_pair * (t * (t + 1) // 2)


def kv_cache_bytes(n_tokens: int, n_layers: int, d_model: int, itemsize: int = 2) -> int:
    """Bytes of a KV cache: a key and a value of width ``d_model`` per token and per layer.

    .. math:: 2 \\times n_\\text{layers} \\times d_\\text{model} \\times \\text{itemsize}
              \\text{ bytes per token}

    (``itemsize = 2`` for 16-bit numbers). Heads split ``d_model`` among themselves, so their
    number does not enter.

    >>> kv_cache_bytes(1, 12, 768)
    36864
    """
    n = _count(n_tokens, "n_tokens")
    return 2 * n * positive_int(n_layers, "n_layers") * positive_int(d_model, "d_model") \
        * positive_int(itemsize, "itemsize")


def attention_bytes(n_q: int, n_k: int, d_k: int, d_v: int, itemsize: int = 4,
                    block_q: int | None = None, block_k: int | None = None,
                    masked: bool = False) -> int:
    """Bytes of the arrays one attention head allocates at its peak (inputs not counted).

    Straightforward (no block sizes, as :func:`attention` allocates): the ``n_q × n_k``
    score matrix, turned into weights in place, and beside it, one at a time, the scaled
    queries and the ``n_q × d_v`` output: ``n_q (n_k + max(d_k, d_v)) · itemsize``. Tiled
    (both block sizes, as :func:`tiled_attention` allocates): the output, one block of
    scaled queries, one ``b_q × b_k`` block of scores, the accumulator and one product with
    the values, and four vectors of length ``b_q`` (running maximum and sum, new maximum,
    rescaling factor), all alive at once while the product is added::

        (n_q d_v + b_q (d_k + b_k + 2 d_v + 4)) · itemsize,   b = min(block, n)

    ``masked`` counts the boolean mask of the hidden pairs (one byte each): for the whole
    matrix, ``n_q n_k`` bytes beside the scores (instead of the queries or the output, if
    larger); for causal tiled attention, ``b_q b_k`` bytes for a block on the diagonal.
    Derived in {ref}`sec-cost-tiled`.

    >>> attention_bytes(4096, 4096, 64, 64)
    68157440
    >>> attention_bytes(4096, 4096, 64, 64, block_q=128, block_k=128)
    1214464
    """
    n_q, n_k = positive_int(n_q, "n_q"), positive_int(n_k, "n_k")
    d_k, d_v = positive_int(d_k, "d_k"), positive_int(d_v, "d_v")
    itemsize = positive_int(itemsize, "itemsize")
    if (block_q is None) != (block_k is None):
        raise ValueError("give both block sizes (tiled) or neither (straightforward)")
    if block_q is None:
        beside = max(n_q * d_k * itemsize, n_q * d_v * itemsize, n_q * n_k if masked else 0)
        return n_q * n_k * itemsize + beside
    b_q = min(positive_int(block_q, "block_q"), n_q)
    b_k = min(positive_int(block_k, "block_k"), n_k)
    return (n_q * d_v + b_q * (d_k + b_k + 2 * d_v + 4)) * itemsize + (b_q * b_k if masked else 0)


# -- masks --------------------------------------------------------------------------------------

# -- the mechanisms -----------------------------------------------------------------------------

def attention(Q, K, V, mask=None) -> np.ndarray:
    """Straightforward scaled dot-product attention, ``softmax(Q Kᵀ / √d_k) V``, row by row.

    .. math:: O = \\operatorname{softmax}\\!\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right) V

    ``Q: (n_q, d_k)``, ``K: (n_k, d_k)``, ``V: (n_k, d_v)``; the result is ``(n_q, d_v)``.
    ``mask`` is an optional boolean ``(n_q, n_k)`` array, true where a query may see a key;
    every query must see at least one key. The whole ``n_q × n_k`` score matrix is formed
    once and turned into weights in place, so it is the only large array allocated
    (:func:`attention_bytes`).

    >>> attention([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0], [4.0]]).tolist()
    [[3.0]]
    >>> attention([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0], [4.0]],
    ...           mask=[[True, False]]).tolist()
    [[2.0]]
    """
    Q, K, V = _qkv(Q, K, V)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != (Q.shape[0], K.shape[0]):
            raise ValueError(f"mask must be a boolean array of shape {(Q.shape[0], K.shape[0])}"
                             f", got dtype {mask.dtype} and shape {mask.shape}")
        if not mask.any(axis=1).all():
            raise ValueError("every query must see at least one key: a row of mask is all False")
    S = (Q * (1 / math.sqrt(Q.shape[1]))) @ K.T       # (n_q, n_k) scores
    if mask is not None:
        np.putmask(S, ~mask, -np.inf)                  # hidden keys get weight e^-inf = 0
    softmax_rows(S)                                    # the weights, in place
    return S @ V                                       # (n_q, d_v)


def softmax_rows(P: np.ndarray) -> None:
    """Row-wise softmax of ``P`` in place, as :func:`attention` computes it.

    Eight passes over ``P``: one reads it for the maximum, the subtraction, the exponential and
    the division each read and write it, one reads it for the sum.

    >>> P = np.zeros((2, 4)); softmax_rows(P); P[0].tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    P -= P.max(axis=1, keepdims=True)
    np.exp(P, out=P)
    P /= P.sum(axis=1, keepdims=True)


def online_normalizer(z, block_size: int = 1) -> tuple[float, float]:
    """The maximum ``m`` of ``z`` and the shifted normalizer ``ℓ = Σ_j e^{z_j − m}``, in one pass.

    The softmax denominator is ``Z = Σ_j e^{z_j} = e^m ℓ``. The scores arrive in blocks of
    ``block_size``; after each block ``B`` the running maximum and the rescaled running sum
    are updated (Milakov and Gimelshein, 2018):

    .. math:: m' = \\max(m, \\max_{j \\in B} z_j), \\qquad
              \\ell \\leftarrow \\ell\\, e^{m - m'} + \\textstyle\\sum_{j \\in B} e^{z_j - m'}

    Derived in {ref}`sec-cost-online`.

    >>> m, ell = online_normalizer([0.0, 0.0, 0.0, 0.0])
    >>> float(m), float(ell)
    (0.0, 4.0)
    """
    z = np.asarray(z, dtype=float)
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"z must be a non-empty 1-D vector, got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("z contains NaN or infinite values")
    block_size = positive_int(block_size, "block_size")
    m, ell = -math.inf, 0.0
    for start in range(0, z.size, block_size):
        block = z[start:start + block_size]
        m_new = max(m, float(block.max()))
        ell = ell * math.exp(m - m_new) + float(np.exp(block - m_new).sum())
        m = m_new
    return m, ell


def online_softmax(z, block_size: int = 1) -> np.ndarray:
    """Softmax of a vector whose maximum and normalizer come from :func:`online_normalizer`.

    .. math:: p_j = e^{z_j - m} / \\ell

    >>> online_softmax([0.0, 0.0]).tolist()
    [0.5, 0.5]
    """
    m, ell = online_normalizer(z, block_size)
    return np.exp(np.asarray(z, dtype=float) - m) / ell


def tiled_attention(Q, K, V, block_q: int, block_k: int, causal: bool = False) -> np.ndarray:
    """Exact attention computed over blocks of queries and keys, never the whole score matrix.

    For each block of ``block_q`` queries, the blocks of ``block_k`` keys are visited in
    order, keeping per query a running maximum ``m``, a running normalizer ``ℓ`` and an
    unnormalized output ``acc``:

    .. math::
        m' = \\max(m, \\max_j s_j), \\quad
        \\ell \\leftarrow e^{m - m'} \\ell + \\textstyle\\sum_j e^{s_j - m'}, \\quad
        acc \\leftarrow e^{m - m'} acc + \\textstyle\\sum_j e^{s_j - m'} v_j

    and the output row is ``acc / ℓ``. Queries outside, keys inside: the loop order of Rabe and
    Staats (2021) and of FlashAttention-2 (Dao, 2023). Shapes as in :func:`attention`. With
    ``causal``, query ``i`` sees keys ``j ≤ i + n_k − n_q`` (:func:`lib.masks.causal_mask`) and
    blocks of keys that no query of the block sees are skipped. Extra memory:
    :func:`attention_bytes`.
    Derived in {ref}`sec-cost-tiled`.

    >>> Q = K = V = np.eye(3)
    >>> bool(np.allclose(tiled_attention(Q, K, V, 2, 2), attention(Q, K, V)))
    True
    """
    Q, K, V = _qkv(Q, K, V)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    (n_q, d_k), n_k = Q.shape, K.shape[0]
    offset = n_k - n_q                              # query i sees keys j <= i + offset
    if causal and offset < 0:
        raise ValueError(f"causal attention needs n_q <= n_k, got {n_q} and {n_k}")
    out = np.empty((n_q, V.shape[1]), dtype=Q.dtype)
    for i0 in range(0, n_q, block_q):
        i1 = min(i0 + block_q, n_q)
        q = Q[i0:i1] * (1 / math.sqrt(d_k))         # (b_q, d_k) scaled queries
        out[i0:i1] = _query_block(q, K, V, i0, block_k, offset if causal else None)
    return out


def _query_block(q, K, V, i0: int, block_k: int, offset: int | None) -> np.ndarray:
    """Outputs of the scaled queries ``q`` (rows ``i0 …``) over blocks of keys, kept online.

    ``offset`` is ``None`` without a mask, else query ``i`` sees the keys ``j ≤ i + offset``.
    """
    i1, n_k = i0 + len(q), K.shape[0]
    m = np.full(len(q), -np.inf, dtype=q.dtype)
    ell = np.zeros(len(q), dtype=q.dtype)
    acc = np.zeros((len(q), V.shape[1]), dtype=q.dtype)
    last_key = n_k - 1 if offset is None else i1 - 1 + offset
    for j0 in range(0, last_key + 1, block_k):
        j1 = min(j0 + block_k, n_k)
        s = q @ K[j0:j1].T                          # (b_q, b_k) one block of scores
        if offset is not None and j1 - 1 > i0 + offset:   # the block crosses the diagonal
            hidden = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None] + offset
            np.putmask(s, hidden, -np.inf)
        m_new = np.maximum(m, s.max(axis=1))
        alpha = np.exp(m - m_new)                   # rescales what was summed so far
        s -= m_new[:, None]                         # s becomes p = e^(s - m'), in place
        np.exp(s, out=s)
        ell = alpha * ell + s.sum(axis=1)
        acc *= alpha[:, None]
        acc += s @ V[j0:j1]                         # (b_q, d_v)
        m = m_new
        del s                                       # freed before the next block is formed
    return acc / ell[:, None]


# -- the models of the chapter, and the pairwise share ------------------------------------------

#: Published shapes: name -> (d_model, heads, layers, context length it was trained at).
#: GPT-2 from its released configurations (Radford et al., 2019); GPT-3 from Brown et al. (2020).
MODELS = {
    "GPT-2 small": (768, 12, 12, 1024),
    "GPT-2 medium": (1024, 16, 24, 1024),
    "GPT-2 XL": (1600, 25, 48, 1024),
    "GPT-3 6.7B": (4096, 32, 32, 2048),
    "GPT-3 175B": (12288, 96, 96, 2048),
}


def pairwise_share(n, d_model: int, n_heads: int, causal: bool = False) -> np.ndarray:
    """Share of one layer's FLOPs in the scores, softmax and weighted sum, for lengths ``n``.

    .. math:: \\frac{(4d + 5h) P}{(4d + 5h) P + 24 d^2 N}, \\qquad P = N^2
              \\text{ or, with ``causal``, } N(N + 1)/2

    The closed form of :func:`layer_flops`' shares (``d_ff = 4d``), for an array of lengths.

    >>> round(float(pairwise_share(1024, 768, 12)), 3)
    0.185
    """
    d, h = _heads(d_model, n_heads)
    n = np.asarray(n, dtype=float)
    pairwise = (4 * d + SOFTMAX_OPS * h) * (n * (n + 1) / 2 if causal else n * n)
    return pairwise / (pairwise + 24 * d * d * n)


# -- block sizes on a chip of M numbers ({ref}`sec-cost-traffic`) ------------------------------

def on_chip(d_k: int, b_q: int, b_k: int) -> int:
    """Numbers a tiled head holds on the chip: ``2 b_q d_k + 2 b_k d_k + b_q b_k``.

    A block of queries and its running output, a block of keys and values, and their scores.

    >>> on_chip(64, 128, 64)
    32768
    """
    return 2 * b_q * d_k + 2 * b_k * d_k + b_q * b_k


def outer_block(M: int, d_k: int, equal: bool = False) -> int:
    """The largest outer block ``b`` that fits in ``M`` numbers beside inner blocks of
    ``min(b, d_k)`` (or, with ``equal``, of ``b``).

    >>> outer_block(192 * 1024 // 2, 64)
    469
    """
    return max(b for b in range(1, M // (2 * d_k) + 1)
               if on_chip(d_k, b, b if equal else min(b, d_k)) <= M)
