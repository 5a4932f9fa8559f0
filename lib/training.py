"""A minimal attention training problem: one query learns to attend to the right key.

Each problem has ``m`` fixed keys ``k_j`` and values ``v_j`` and a target key ``t``. Only the
query ``q`` is trained. The attention output is ``o = Σ_j p_j v_j`` with
``p = softmax(K q / s)``, where ``s = √d_k`` (scaled) or ``1`` (unscaled), and the loss is
the squared distance to the target's value,

.. math:: L = \\tfrac12 \\lVert o - v_t \\rVert^2 .

The loss reaches ``q`` only through the softmax, so its gradient carries the softmax
Jacobian ``J = diag(p) − p pᵀ``:

.. math:: \\frac{\\partial L}{\\partial p_j} = (o - v_t) \\cdot v_j, \\qquad
          \\frac{\\partial L}{\\partial z} = J \\frac{\\partial L}{\\partial p}, \\qquad
          \\frac{\\partial L}{\\partial q} = \\frac{1}{s} K^\\top \\frac{\\partial L}{\\partial z}.

Many problems are solved at once (a leading batch axis ``B``); they do not interact.
"""

from __future__ import annotations

import numpy as np

from ._checks import generator, positive_float, positive_int
from .attention import softmax


def make_retrieval_problems(n_problems: int, m: int, d_k: int, d_v: int, rng):
    """Draw ``n_problems`` independent problems with i.i.d. N(0, 1) queries, keys and values.

    Returns ``(q, K, V, target)`` with shapes ``(B, d_k)``, ``(B, m, d_k)``, ``(B, m, d_v)``
    and ``(B,)``; each target is a key index drawn uniformly from ``0 … m − 1``.

    >>> q, K, V, t = make_retrieval_problems(2, 3, 4, 5, np.random.default_rng(0))
    >>> q.shape, K.shape, V.shape, t.shape
    ((2, 4), (2, 3, 4), (2, 3, 5), (2,))
    """
    B = positive_int(n_problems, "n_problems")
    m = positive_int(m, "m")
    if m < 2:
        raise ValueError(f"m must be at least 2 (a choice between keys), got {m}")
    d_k, d_v = positive_int(d_k, "d_k"), positive_int(d_v, "d_v")
    rng = generator(rng)
    K = rng.standard_normal((B, m, d_k))
    V = rng.standard_normal((B, m, d_v))
    q = rng.standard_normal((B, d_k))
    target = rng.integers(m, size=B)
    return q, K, V, target


def _check_problems(q, K, V, target):
    q, K, V = (np.asarray(a, dtype=float) for a in (q, K, V))
    target = np.asarray(target)
    if q.ndim != 2 or K.ndim != 3 or V.ndim != 3 or target.ndim != 1:
        raise ValueError(
            "expected q (B, d_k), K (B, m, d_k), V (B, m, d_v), target (B,); got shapes "
            f"{q.shape}, {K.shape}, {V.shape}, {target.shape}"
        )
    B, m, d_k = K.shape
    if q.shape != (B, d_k) or V.shape[:2] != (B, m) or target.shape != (B,):
        raise ValueError(
            f"shapes do not match: q {q.shape}, K {K.shape}, V {V.shape}, target {target.shape}"
        )
    if q.size == 0 or K.size == 0 or V.size == 0:
        raise ValueError("empty problems: every axis needs at least one entry")
    if not all(np.all(np.isfinite(a)) for a in (q, K, V)):
        raise ValueError("q, K and V must be finite")
    if not np.issubdtype(target.dtype, np.integer) or target.min() < 0 or target.max() >= m:
        raise ValueError(f"target must hold key indices in 0 … {m - 1}")
    return q, K, V, target


def retrieval_loss_and_grad(q, K, V, target, scale: bool = True):
    """Loss ``½‖Σ_j p_j v_j − v_t‖²`` per problem, its gradient in ``q``, and the weights.

    .. math:: \\nabla_q L = \\tfrac{1}{s} K^\\top \\left(\\operatorname{diag}(p) - p p^\\top
              \\right) V (o - v_t), \\qquad s = \\sqrt{d_k} \\text{ or } 1

    Returns ``(loss, grad, weights)`` with shapes ``(B,)``, ``(B, d_k)`` and ``(B, m)``.

    >>> q, K, V, t = make_retrieval_problems(1, 2, 2, 1, np.random.default_rng(0))
    >>> [a.shape for a in retrieval_loss_and_grad(q, K, V, t)]
    [(1,), (1, 2), (1, 2)]
    """
    q, K, V, target = _check_problems(q, K, V, target)
    return _loss_and_grad(q, K, V, target, scale)


def _loss_and_grad(q, K, V, target, scale):
    """:func:`retrieval_loss_and_grad` on inputs that have already been checked."""
    s = np.sqrt(K.shape[2]) if scale else 1.0
    z = np.einsum("bd,bmd->bm", q, K) / s
    p = softmax(z, axis=-1)
    rows = np.arange(K.shape[0])
    residual = np.einsum("bm,bmv->bv", p, V) - V[rows, target]
    loss = 0.5 * np.sum(residual**2, axis=1)
    dL_dp = np.einsum("bv,bmv->bm", residual, V)
    dL_dz = p * (dL_dp - np.sum(p * dL_dp, axis=1, keepdims=True))  # J dL/dp, J symmetric
    grad = np.einsum("bm,bmd->bd", dL_dz, K) / s
    return loss, grad, p


def train_query(q, K, V, target, scale: bool = True, lr: float = 1.0, steps: int = 300):
    """Plain gradient descent on the queries, ``q ← q − lr ∇_q L``, for ``steps`` steps.

    Returns a dict with ``loss`` and ``grad_norm`` of shape ``(steps, B)`` (recorded before each
    update), and, after the last update, ``q`` ``(B, d_k)``, ``final_loss`` ``(B,)`` and
    ``weights`` ``(B, m)``. The inputs are not modified.

    >>> q, K, V, t = make_retrieval_problems(4, 3, 8, 2, np.random.default_rng(0))
    >>> h = train_query(q, K, V, t, steps=50)
    >>> bool(h["final_loss"].mean() < h["loss"][0].mean())
    True
    """
    q, K, V, target = _check_problems(q, K, V, target)
    lr = positive_float(lr, "lr")
    steps = positive_int(steps, "steps")
    q = q.copy()
    losses = np.empty((steps, q.shape[0]))
    norms = np.empty((steps, q.shape[0]))
    for step in range(steps):
        loss, grad, _ = _loss_and_grad(q, K, V, target, scale)
        losses[step] = loss
        norms[step] = np.linalg.norm(grad, axis=1)
        q -= lr * grad
    final_loss, _, weights = _loss_and_grad(q, K, V, target, scale)
    return {"loss": losses, "grad_norm": norms, "q": q, "final_loss": final_loss,
            "weights": weights}
