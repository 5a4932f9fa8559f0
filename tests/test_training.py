"""lib.training: shapes, the gradient against finite differences, and the mechanism."""

from __future__ import annotations

import numpy as np
import pytest

from lib import training
from lib.attention import numerical_jacobian, softmax
from lib.training import (
    make_retrieval_problems,
    retrieval_loss_and_grad,
    target_in_hull,
    train_queries,
    train_query,
)
from tests.conftest import chapter_cell


def problems(B=3, m=5, d_k=6, d_v=4, seed=0):
    return make_retrieval_problems(B, m, d_k, d_v, np.random.default_rng(seed))


def test_problems_have_the_documented_shapes_and_targets():
    q, K, V, t = problems(B=7, m=4, d_k=3, d_v=2)
    assert q.shape == (7, 3) and K.shape == (7, 4, 3) and V.shape == (7, 4, 2)
    assert t.shape == (7,) and t.min() >= 0 and t.max() < 4
    q2, *_ = problems(B=7, m=4, d_k=3, d_v=2)
    np.testing.assert_array_equal(q, q2)  # seeded: reproducible


@pytest.mark.parametrize("args, message", [
    ((0, 4, 3, 2), "n_problems"), ((2, 1, 3, 2), "at least 2"), ((2, 4, 0, 2), "d_k"),
    ((2, 4, 3, 1.5), "d_v"),
])
def test_make_problems_rejects_bad_sizes(args, message):
    with pytest.raises(ValueError, match=message):
        make_retrieval_problems(*args, np.random.default_rng(0))


def test_make_problems_requires_a_generator():
    with pytest.raises(ValueError, match="Generator"):
        make_retrieval_problems(2, 3, 4, 5, rng=42)


def test_loss_matches_its_definition():
    q, K, V, t = problems()
    for scale in (True, False):
        loss, grad, p = retrieval_loss_and_grad(q, K, V, t, scale=scale)
        s = np.sqrt(K.shape[2]) if scale else 1.0
        for b in range(len(t)):
            pb = softmax(K[b] @ q[b] / s)
            np.testing.assert_allclose(p[b], pb, rtol=1e-12)
            assert loss[b] == pytest.approx(0.5 * np.sum((pb @ V[b] - V[b, t[b]]) ** 2), rel=1e-12)
        assert grad.shape == q.shape


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradient_matches_finite_differences(scale, seed):
    q, K, V, t = problems(B=2, m=6, d_k=8, d_v=3, seed=seed)
    _, grad, _ = retrieval_loss_and_grad(q, K, V, t, scale=scale)
    for b in range(2):
        def f(v, b=b):
            return retrieval_loss_and_grad(v[None], K[b:b + 1], V[b:b + 1], t[b:b + 1],
                                           scale=scale)[0]
        fd = numerical_jacobian(f, q[b])[0]
        np.testing.assert_allclose(grad[b], fd, rtol=1e-5, atol=1e-8)


def test_saturated_wrong_row_has_almost_no_gradient():
    # One query, saturated on key 0 while the target is key 1: the Jacobian kills the gradient.
    K = np.eye(3)[None] * 1.0
    V = np.eye(3)[None]
    q = np.array([[40.0, 0.0, 0.0]])
    loss, grad, p = retrieval_loss_and_grad(q, K, V, np.array([1]), scale=False)
    assert p[0, 0] > 1 - 1e-15 and loss[0] == pytest.approx(1.0)
    assert np.linalg.norm(grad) < 1e-15


@pytest.mark.parametrize("bad, message", [
    (lambda q, K, V, t: (q[0], K, V, t), "expected"),
    (lambda q, K, V, t: (q[:, :2], K, V, t), "do not match"),
    (lambda q, K, V, t: (q, K, V, t + 100), "key indices"),
    (lambda q, K, V, t: (q, K, V, t.astype(float)), "key indices"),
    (lambda q, K, V, t: (q * np.nan, K, V, t), "finite"),
    (lambda q, K, V, t: (q[:0], K[:0], V[:0], t[:0]), "empty"),
])
def test_loss_and_train_reject_bad_input(bad, message):
    args = bad(*problems())
    with pytest.raises(ValueError, match=message):
        retrieval_loss_and_grad(*args)
    with pytest.raises(ValueError, match=message):
        train_query(*args, steps=1)


@pytest.mark.parametrize("kwargs, message", [({"lr": 0.0}, "lr"), ({"steps": 0}, "steps")])
def test_train_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        train_query(*problems(), **kwargs)


def test_train_records_history_and_leaves_inputs_alone():
    q, K, V, t = problems(B=4, m=3, d_k=8, d_v=2)
    q_before = q.copy()
    h = train_query(q, K, V, t, lr=0.5, steps=40)
    np.testing.assert_array_equal(q, q_before)
    assert h["loss"].shape == (40, 4) and h["grad_norm"].shape == (40, 4)
    assert h["q"].shape == q.shape and h["weights"].shape == (4, 3)
    loss0, grad0, _ = retrieval_loss_and_grad(q, K, V, t)
    np.testing.assert_allclose(h["loss"][0], loss0)
    np.testing.assert_allclose(h["grad_norm"][0], np.linalg.norm(grad0, axis=1))
    assert h["final_loss"].mean() < h["loss"][0].mean()


def plain_descent(q, K, V, t, scale, lr, steps):
    """Gradient descent on q itself, step by step with retrieval_loss_and_grad: the reference
    for train_query, which computes the same steps in the span of the keys."""
    q, losses, norms = q.copy(), [], []
    for _ in range(steps):
        loss, grad, _ = retrieval_loss_and_grad(q, K, V, t, scale=scale)
        losses.append(loss)
        norms.append(np.linalg.norm(grad, axis=1))
        q -= lr * grad
    final_loss, _, weights = retrieval_loss_and_grad(q, K, V, t, scale=scale)
    return {"loss": np.array(losses), "grad_norm": np.array(norms), "q": q,
            "final_loss": final_loss, "weights": weights}


@pytest.mark.parametrize("d_k", [3, 8, 40])  # fewer dimensions than keys, as many, more
@pytest.mark.parametrize("scale", [True, False])
def test_training_in_the_span_of_the_keys_is_plain_descent(d_k, scale):
    q, K, V, t = problems(B=6, m=8, d_k=d_k, d_v=5, seed=d_k)
    lr = 0.5 if scale else 0.5 / d_k
    mine, ref = train_query(q, K, V, t, scale=scale, lr=lr, steps=60), plain_descent(
        q, K, V, t, scale, lr, 60)
    assert mine.keys() == ref.keys()
    for key in ref:
        np.testing.assert_allclose(mine[key], ref[key], rtol=1e-9, atol=1e-12, err_msg=key)


def test_train_queries_equals_separate_runs_bitwise(monkeypatch):
    rng = np.random.default_rng(5)
    settings = [(3, True, 1.0), (16, False, 0.1), (16, True, 10.0), (40, False, 0.01)]
    runs = [(*make_retrieval_problems(5 + d_k % 7, 8, d_k, 4, rng), scale, lr)
            for d_k, scale, lr in settings]
    together = train_queries(runs, steps=30)
    monkeypatch.setattr(training, "_CHUNK", 4)  # chunks of 4 problems: the same numbers
    chunked = train_queries(runs, steps=30)
    for run, a, b in zip(runs, together, chunked, strict=True):
        alone = train_query(*run[:4], scale=run[4], lr=run[5], steps=30)
        for key in alone:
            np.testing.assert_array_equal(a[key], alone[key], err_msg=key)
            np.testing.assert_array_equal(b[key], alone[key], err_msg=key)


def test_train_queries_rejects_bad_runs():
    a = problems(B=2, m=5, d_k=3, d_v=4)
    with pytest.raises(ValueError, match="empty"):
        train_queries([], steps=3)
    with pytest.raises(ValueError, match="same m and d_v"):
        train_queries([(*a, True, 1.0), (*problems(B=2, m=4, d_k=3, d_v=4), True, 1.0)])
    with pytest.raises(ValueError, match="lr"):
        train_queries([(*a, True, -1.0)])


def test_scaling_lets_the_query_learn_where_raw_scores_stall():
    # The chapter's experiment in small: d_k = 256, 32 problems, 150 steps, learning rate 1.
    q, K, V, t = make_retrieval_problems(32, 8, 256, 8, np.random.default_rng(256))
    rows = np.arange(32)
    scaled = train_query(q, K, V, t, scale=True, lr=1.0, steps=150)
    raw = train_query(q, K, V, t, scale=False, lr=1.0, steps=150)
    assert (scaled["weights"][rows, t] > 0.9).mean() > 0.9
    assert (raw["weights"][rows, t] > 0.9).mean() < 0.5
    assert np.median(raw["grad_norm"][-1]) < 1e-6 < np.median(scaled["grad_norm"][-1])


def test_chapter_loss_and_grad_agrees_with_lib():
    ns = chapter_cell("expectation-variance", "derive-loss-grad")
    for seed, d_k in ((0, 4), (1, 16), (2, 64)):
        q, K, V, t = problems(B=5, m=8, d_k=d_k, d_v=8, seed=seed)
        for scale in (True, False):
            mine = ns["loss_and_grad"](q, K, V, t, np.sqrt(d_k) if scale else 1.0)
            ours = retrieval_loss_and_grad(q, K, V, t, scale=scale)
            for a, b in zip(mine, ours, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_unscaled_at_lr_over_d_k_is_scaled_from_a_longer_query():
    """Unscaled training at rate η/d_k from q₀ is scaled training at rate η from √d_k q₀."""
    for d_k in (9, 64):  # √9 = 3 is not a power of two: equal to rounding, not bitwise
        q, K, V, t = problems(B=16, m=8, d_k=d_k, d_v=8, seed=d_k)
        raw = train_query(q, K, V, t, scale=False, lr=0.5 / d_k, steps=40)
        scaled = train_query(np.sqrt(d_k) * q, K, V, t, scale=True, lr=0.5, steps=40)
        np.testing.assert_allclose(np.sqrt(d_k) * raw["q"], scaled["q"], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(raw["loss"], scaled["loss"], rtol=1e-9, atol=1e-12)


def test_scaling_is_a_short_start_and_a_small_rate():
    """Scaled training at rate η from q₀ is unscaled training at rate η/d_k from q₀/√d_k."""
    for d_k in (9, 64):
        q, K, V, t = problems(B=16, m=8, d_k=d_k, d_v=8, seed=d_k + 1)
        scaled = train_query(q, K, V, t, scale=True, lr=0.5, steps=40)
        raw = train_query(q / np.sqrt(d_k), K, V, t, scale=False, lr=0.5 / d_k, steps=40)
        np.testing.assert_allclose(np.sqrt(d_k) * raw["q"], scaled["q"], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(raw["weights"], scaled["weights"], rtol=1e-9, atol=1e-12)


def test_target_in_hull_matches_a_direct_construction():
    rng = np.random.default_rng(7)
    K = rng.standard_normal((40, 6, 3))
    t = rng.integers(6, size=40)
    inside = rng.random(40) < 0.5
    lam = rng.dirichlet(np.ones(5), size=40)  # convex weights on the other five keys
    for b in np.flatnonzero(inside):
        others = [j for j in range(6) if j != t[b]]
        K[b, t[b]] = lam[b] @ K[b, others]
    far = ~inside
    K[far, t[far]] = 100.0 * K[far, t[far]] / np.linalg.norm(K[far, t[far]], axis=1)[:, None]
    np.testing.assert_array_equal(target_in_hull(K, t), inside)


def test_a_target_in_the_hull_never_gets_half_the_weight():
    rng = np.random.default_rng(8)
    K = rng.standard_normal((200, 8, 4))
    t = rng.integers(8, size=200)
    inside = target_in_hull(K, t)
    assert 0 < inside.sum() < 200
    q = 10.0 * rng.standard_normal((200, 50, 4))  # many queries, large scores
    p = softmax(np.einsum("bqd,bmd->bqm", q, K), axis=-1)
    p_t = p[np.arange(200), :, t]  # (B, queries)
    assert p_t[inside].max() <= 0.5 + 1e-12


def test_target_in_hull_rejects_bad_input():
    with pytest.raises(ValueError, match="3-D"):
        target_in_hull(np.zeros((3, 4)), [0])
    with pytest.raises(ValueError, match="key indices"):
        target_in_hull(np.ones((1, 4, 2)), [4])


def test_plot_curves_draws_each_curve_and_checks_shapes():
    import matplotlib.pyplot as plt

    from lib.plotting import plot_curves

    ax = plot_curves([0, 1, 2], {"a": ([3.0, 2.0, 1.0], {"ls": "--"}),
                                 "b": ([1.0, 1e-3, 1e-6], {})}, ylabel="loss", logy=True)
    assert [line.get_label() for line in ax.lines] == ["a", "b"]
    assert ax.lines[0].get_linestyle() == "--" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "step" and ax.get_ylabel() == "loss"
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="shape"):
        plot_curves([0, 1], {"a": ([1.0, 2.0, 3.0], {})})
    with pytest.raises(ValueError, match="non-empty"):
        plot_curves([], {"a": ([], {})})
    with pytest.raises(ValueError, match="non-empty"):
        plot_curves([0, 1], {})
