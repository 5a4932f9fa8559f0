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
Derived in {ref}`sec-training-experiment` (chapter *Expectation and Variance*).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ._checks import (
    as_matrix,
    as_stack,
    indices,
    positive_float,
    positive_int,
    require_generator,
)
from .attention import softmax

__all__ = [
    "make_retrieval_problems",
    "retrieval_loss_and_grad",
    "target_in_hull",
    "train_queries",
    "train_query",
]


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
    rng = require_generator(rng)
    K = rng.standard_normal((B, m, d_k))
    V = rng.standard_normal((B, m, d_v))
    q = rng.standard_normal((B, d_k))
    target = rng.integers(m, size=B)
    return q, K, V, target


def _checked_problems(q, K, V, target):
    """``(q, K, V, target)`` as arrays of matching shapes ``(B, d_k), (B, m, d_k), (B, m, d_v),
    (B,)``, or ``ValueError``; every check is a :mod:`lib._checks` helper."""
    shapes = tuple(np.shape(a) for a in (q, K, V, target))
    if [len(s) for s in shapes] != [2, 3, 3, 1]:
        raise ValueError("expected q (B, d_k), K (B, m, d_k), V (B, m, d_v), target (B,); "
                         f"got shapes {shapes}")
    if 0 in shapes[0] + shapes[1] + shapes[2]:
        raise ValueError("empty problems: every axis needs at least one entry")
    q, K, V = as_matrix(q, "q"), as_stack(K, "K"), as_stack(V, "V")
    B, m, d_k = K.shape
    if q.shape != (B, d_k) or V.shape[:2] != (B, m) or shapes[3] != (B,):
        raise ValueError(f"shapes do not match: q {q.shape}, K {K.shape}, V {V.shape}, "
                         f"target {shapes[3]}")
    return q, K, V, indices(target, m, "target")


def retrieval_loss_and_grad(q, K, V, target, scale: bool = True):
    """Loss ``½‖Σ_j p_j v_j − v_t‖²`` per problem, its gradient in ``q``, and the weights.

    .. math:: \\nabla_q L = \\tfrac{1}{s} K^\\top \\left(\\operatorname{diag}(p) - p p^\\top
              \\right) V (o - v_t), \\qquad s = \\sqrt{d_k} \\text{ or } 1

    Returns ``(loss, grad, weights)`` with shapes ``(B,)``, ``(B, d_k)`` and ``(B, m)``.
    Derived in {ref}`sec-training-experiment`.

    >>> q, K, V, t = make_retrieval_problems(1, 2, 2, 1, np.random.default_rng(0))
    >>> [a.shape for a in retrieval_loss_and_grad(q, K, V, t)]
    [(1,), (1, 2), (1, 2)]
    """
    q, K, V, target = _checked_problems(q, K, V, target)
    return _loss_and_grad(q, K, V, target, _divisor(K, scale))


def _divisor(K, scale):
    """The score divisor ``s``: ``√d_k`` when scaled, else 1."""
    return np.sqrt(K.shape[2]) if scale else 1.0


def _loss_and_grad(q, K, V, target, s):
    """:func:`retrieval_loss_and_grad` on checked inputs, with the score divisor ``s`` given."""
    z = np.einsum("bd,bmd->bm", q, K) / s  # scores (B, m)
    p = softmax(z, axis=-1)  # weights (B, m)
    rows = np.arange(K.shape[0])
    residual = np.einsum("bm,bmv->bv", p, V) - V[rows, target]  # o − v_t (B, d_v)
    loss = 0.5 * np.sum(residual**2, axis=1)
    dL_dp = np.einsum("bv,bmv->bm", residual, V)  # (o − v_t) · v_j
    dL_dz = p * (dL_dp - np.sum(p * dL_dp, axis=1, keepdims=True))  # J dL/dp, J symmetric
    grad = np.einsum("bm,bmd->bd", dL_dz, K) / s  # Kᵀ dL/dz / s (B, d_k)
    return loss, grad, p


#: Problems trained side by side in one chunk of :func:`train_queries`: about 0.5 MB of keys,
#: which stay in a core's cache over all the steps (larger chunks run slower per problem).
_CHUNK = 1024


def train_query(q, K, V, target, scale: bool = True, lr: float = 1.0, steps: int = 300):
    """Plain gradient descent on the queries, ``q ← q − lr ∇_q L``, for ``steps`` steps.

    Returns a dict with ``loss`` and ``grad_norm`` of shape ``(steps, B)`` (recorded before each
    update), and, after the last update, ``q`` ``(B, d_k)``, ``final_loss`` ``(B,)`` and
    ``weights`` ``(B, m)``. The inputs are not modified. The steps are computed in the span of
    each problem's keys (:func:`train_queries`, which runs several such trainings at once).

    >>> q, K, V, t = make_retrieval_problems(4, 3, 8, 2, np.random.default_rng(0))
    >>> h = train_query(q, K, V, t, steps=50)
    >>> bool(h["final_loss"].mean() < h["loss"][0].mean())
    True
    """
    return train_queries([(q, K, V, target, scale, lr)], steps)[0]


def train_queries(runs, steps: int = 300):
    """Several runs of :func:`train_query` as one array program.

    ``runs`` is a sequence of ``(q, K, V, target, scale, lr)``; the runs may differ in ``d_k``,
    the number of problems, the scaling and the learning rate, but share ``m`` and ``d_v``.
    Returns one dict per run, in order, as :func:`train_query` describes.

    The gradient ``∇_q L = Kᵀ (∂L/∂z) / s`` lies in the span of the ``m`` keys, so every step
    moves ``q`` inside ``q₀ + span(k_1, …, k_m)``, a space of at most ``r = min(m, d_k)``
    dimensions. With the reduced QR factorization ``Kᵀ = Q R`` (``Q`` of shape ``d_k × r`` with
    orthonormal columns), the coordinates ``y = Qᵀ q`` give the same scores, ``z = K q / s =
    Rᵀ y / s``, and the same steps, ``y ← y − lr R (∂L/∂z) / s``, with ``‖∇_q L‖ = ‖R ∂L/∂z‖ / s``;
    at the end ``q = q₀ + Q (y − y₀)``. Each step then costs ``O(m r)`` per problem instead of
    ``O(m d_k)``, and runs of different ``d_k`` share one batch (``y`` padded with zeros to the
    largest ``r``). The result equals step-by-step descent on ``q`` up to rounding.

    >>> rng = np.random.default_rng(0)
    >>> a = make_retrieval_problems(3, 4, 2, 2, rng)
    >>> b = make_retrieval_problems(5, 4, 16, 2, rng)
    >>> ra, rb = train_queries([(*a, True, 1.0), (*b, False, 0.1)], steps=20)
    >>> ra["q"].shape, rb["loss"].shape
    ((3, 2), (20, 5))
    """
    steps = positive_int(steps, "steps")
    runs = [_reduced_run(*run) for run in runs]
    if not runs:
        raise ValueError("runs is empty: give at least one (q, K, V, target, scale, lr)")
    if len({run["V"].shape[1:] for run in runs}) != 1:
        raise ValueError("every run needs the same m and d_v, got V of shapes "
                         f"{[run['V'].shape for run in runs]}")
    y, R_T, V, v_t, lr = _side_by_side(runs)
    losses, norms, final_loss, weights = _descend(y, R_T, V, v_t, lr, steps)
    return _split_runs(runs, y.T, losses, norms, final_loss, weights.T)


def _side_by_side(runs):
    """The reduced runs' arrays as one batch, the batch axis last: ``y`` ``(r, N)``, the keys
    ``R_T`` already divided by ``s`` ``(m, r, N)``, ``V`` ``(m, d_v, N)``, the target values
    ``v_t`` ``(d_v, N)`` and the learning rates ``(N,)``; ``y`` and ``R_T`` padded with zeros to
    the largest ``r``."""
    r = max(run["R_T"].shape[2] for run in runs)

    def batch_last(key, pad=False):  # the runs' arrays side by side, the batch axis last
        a = np.concatenate([_pad_last(run[key], r) if pad else run[key] for run in runs])
        return np.ascontiguousarray(np.moveaxis(a, 0, -1))

    R_T = batch_last("R_T", pad=True)  # the keys in the coordinates y (m, r, N)
    y = batch_last("y0", pad=True)  # (r, N)
    V = batch_last("V")  # (m, d_v, N)
    target = np.concatenate([run["target"] for run in runs])
    v_t = np.ascontiguousarray(V[target, :, np.arange(V.shape[2])].T)  # target values (d_v, N)
    s = np.concatenate([np.full(len(run["y0"]), run["s"]) for run in runs])
    R_T = R_T / s  # Rᵀ / s: the scores are (Rᵀ / s) y and the gradient (R / s) ∂L/∂z
    lr = np.concatenate([np.full(len(run["y0"]), run["lr"]) for run in runs])
    return y, R_T, V, v_t, lr


def _descend(y, R_T, V, v_t, lr, steps):
    """``steps`` steps ``y ← y − lr R (∂L/∂z) / s`` on the batch of :func:`_side_by_side`, in
    place on ``y``. Returns the losses and gradient norms ``(steps, N)`` before each step, and
    the final loss ``(N,)`` and weights ``(m, N)`` after the last."""
    N = y.shape[1]
    losses, norms = np.empty((steps, N)), np.empty((steps, N))
    final_loss, weights = np.empty(N), np.empty((R_T.shape[0], N))
    for start in range(0, N, _CHUNK):  # the problems do not interact: chunks that fit a cache
        b = slice(start, start + _CHUNK)
        y_b, R_b, V_b, v_b = (np.ascontiguousarray(a[..., b]) for a in (y, R_T, V, v_t))
        lr_b = lr[b]
        for step in range(steps):
            losses[step, b], grad, _ = _reduced_step(y_b, R_b, V_b, v_b)
            norms[step, b] = np.sqrt(np.sum(grad**2, axis=0))  # ‖R ∂L/∂z‖ / s = ‖∇_q L‖
            y_b -= lr_b * grad
        final_loss[b], _, weights[:, b] = _reduced_step(y_b, R_b, V_b, v_b)
        y[:, b] = y_b
    return losses, norms, final_loss, weights


def _split_runs(runs, y, losses, norms, final_loss, weights):
    """One dict per run, as :func:`train_query` describes, from the batch's results (the batch
    axis first in ``y`` ``(N, r)`` and ``weights`` ``(N, m)``, last in the rest); each query is
    taken back from the coordinates ``y``, ``q = q₀ + Q (y − y₀)``."""
    out, start = [], 0
    for run in runs:
        rows = slice(start, start + len(run["y0"]))
        start = rows.stop
        moved = y[rows, :run["y0"].shape[1]] - run["y0"]
        out.append({"loss": losses[:, rows], "grad_norm": norms[:, rows],
                    "q": run["q"] + np.einsum("bdr,br->bd", run["Q"], moved),
                    "final_loss": final_loss[rows], "weights": weights[rows]})
    return out


def _reduced_step(y, R_T, V, v_t):
    """:func:`_loss_and_grad` in the coordinates ``y``, with the keys ``R_T`` already divided
    by ``s`` and the batch axis last (``y`` ``(r, N)``, ``R_T`` ``(m, r, N)``, ``V``
    ``(m, d_v, N)``, the target values ``v_t`` ``(d_v, N)``): ``(loss, gradient in y,
    weights)``, of shapes ``(N,)``, ``(r, N)`` and ``(m, N)``."""
    z = np.einsum("mrb,rb->mb", R_T, y)  # scores Rᵀ y / s = K q / s
    e = np.exp(z - z.max(axis=0))
    p = e / e.sum(axis=0)  # the softmax over the m keys
    residual = np.einsum("mb,mvb->vb", p, V) - v_t  # o − v_t
    loss = 0.5 * np.sum(residual**2, axis=0)
    dL_dp = np.einsum("mvb,vb->mb", V, residual)  # (o − v_t) · v_j
    dL_dz = p * (dL_dp - np.sum(p * dL_dp, axis=0))  # J dL/dp
    grad = np.einsum("mrb,mb->rb", R_T, dL_dz)  # R dL/dz / s
    return loss, grad, p


def _reduced_run(q, K, V, target, scale=True, lr=1.0):
    """One run of :func:`train_queries`, checked and in the coordinates ``y = Qᵀ q``."""
    q, K, V, target = _checked_problems(q, K, V, target)
    Q, R = np.linalg.qr(K.transpose(0, 2, 1))  # Kᵀ = Q R: (B, d_k, r) and (B, r, m)
    return {"q": q, "Q": Q, "R_T": R.transpose(0, 2, 1), "y0": np.einsum("bdr,bd->br", Q, q),
            "V": V, "target": target, "s": _divisor(K, scale), "lr": positive_float(lr, "lr")}


def _pad_last(a, r):
    """``a`` with zeros appended to its last axis, up to length ``r``."""
    return np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, r - a.shape[-1])])


def target_in_hull(K, target):
    """Whether each target key lies in the convex hull of the other keys of its problem.

    If ``k_t = Σ_j λ_j k_j`` with ``λ_j ≥ 0``, ``Σ_j λ_j = 1`` over ``j ≠ t``, then for every
    query ``q · k_t = Σ_j λ_j q · k_j ≤ max_{j≠t} q · k_j``, so the target's weight can never
    exceed that of its strongest rival, and ``p_t ≤ 1/2``. By Carathéodory's theorem it
    suffices to test the simplices of ``d_k + 1`` other keys: ``K`` is ``(B, m, d_k)`` with
    ``m − 1 ≥ d_k + 1`` (otherwise the hull has measure zero and the answer is ``False``).
    Returns a boolean array ``(B,)``. Derived in {ref}`sec-ev-deeper-training`.

    >>> K = np.array([[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.2, 0.2]]])
    >>> target_in_hull(K, [3]).tolist(), target_in_hull(K, [1]).tolist()
    ([True], [False])
    """
    K = as_stack(K, "K")
    B, m, d_k = K.shape
    target = indices(np.broadcast_to(np.asarray(target), (B,)), m, "target")
    others = np.array([[j for j in range(m) if j != t] for t in target]).reshape(B, m - 1)
    P = K[np.arange(B)[:, None], others]  # the other keys (B, m − 1, d_k)
    rhs = np.append(K[np.arange(B), target], np.ones((B, 1)), axis=1)[..., None]  # (B, d_k+1, 1)
    inside = np.zeros(B, dtype=bool)
    for simplex in combinations(range(m - 1), d_k + 1):
        A = np.append(P[:, simplex, :], np.ones((B, d_k + 1, 1)), axis=2).transpose(0, 2, 1)
        lam = np.linalg.solve(A, rhs)[..., 0]  # barycentric coordinates (B, d_k + 1)
        inside |= (lam >= 0).all(axis=1)
    return inside
