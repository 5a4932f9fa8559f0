"""lib.heads against references: per-head loops, the sum over heads, closed forms, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lib.attention import attention, softmax
from lib.heads import (
    attention_parameters,
    attention_stack,
    head_circuits,
    head_outputs,
    merge_heads,
    multi_head_attention,
    rank_one_residual,
    readout_error,
    split_heads,
    two_offset_error,
    two_offset_layer,
    two_offset_targets,
    two_offset_weights,
)
from lib.masks import causal_mask, masked_attention
from tests.conftest import chapter_cell


def random_layer(rng, N=5, d=8, h=2, d_out=None):
    d_out = d if d_out is None else d_out
    X = rng.standard_normal((N, d))
    W_Q, W_K, W_V = rng.standard_normal((3, d, d)) / math.sqrt(d)
    W_O = rng.standard_normal((d, d_out)) / math.sqrt(d)
    return X, W_Q, W_K, W_V, W_O


# -- splitting and merging ------------------------------------------------------------------

def test_split_heads_takes_consecutive_column_blocks_and_merge_undoes_it():
    A = np.arange(24.0).reshape(2, 12)
    H = split_heads(A, 3)
    assert H.shape == (3, 2, 4)
    for i in range(3):
        np.testing.assert_array_equal(H[i], A[:, 4 * i:4 * (i + 1)])
    np.testing.assert_array_equal(merge_heads(H), A)


@pytest.mark.parametrize("h", [3, 5, 0, -1, 2.0, True])
def test_split_heads_rejects_a_number_of_heads_that_does_not_divide_d(h):
    with pytest.raises(ValueError, match="n_heads"):
        split_heads(np.ones((2, 4)), h)


# -- the layer ------------------------------------------------------------------------------

@pytest.mark.parametrize("h", [1, 2, 4, 8])
def test_multi_head_attention_equals_a_loop_over_heads_with_lib_attention(h):
    rng = np.random.default_rng(h)
    X, W_Q, W_K, W_V, W_O = random_layer(rng, d=8, h=h, d_out=6)
    d_k = 8 // h
    heads = [attention(X @ W_Q[:, i * d_k:(i + 1) * d_k], X @ W_K[:, i * d_k:(i + 1) * d_k],
                       X @ W_V[:, i * d_k:(i + 1) * d_k]) for i in range(h)]
    expected = np.concatenate(heads, axis=1) @ W_O
    np.testing.assert_allclose(multi_head_attention(X, W_Q, W_K, W_V, W_O, h), expected,
                               rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("h", [1, 2, 4])
def test_the_layer_is_the_sum_over_heads_of_P_V_W_O(h):
    rng = np.random.default_rng(10 + h)
    X, W_Q, W_K, W_V, W_O = random_layer(rng, N=7, d=8, h=h)
    parts = head_outputs(X, W_Q, W_K, W_V, W_O, h)
    assert parts.shape == (h, 7, 8)
    np.testing.assert_allclose(parts.sum(axis=0), multi_head_attention(X, W_Q, W_K, W_V, W_O, h),
                               rtol=1e-12, atol=1e-13)


def test_a_mask_restricts_every_head():
    rng = np.random.default_rng(3)
    X, W_Q, W_K, W_V, W_O = random_layer(rng, N=6, d=4, h=2)
    M = causal_mask(6)
    heads = [masked_attention(X @ W_Q[:, 2 * i:2 * i + 2], X @ W_K[:, 2 * i:2 * i + 2],
                              X @ W_V[:, 2 * i:2 * i + 2], M) for i in range(2)]
    np.testing.assert_allclose(multi_head_attention(X, W_Q, W_K, W_V, W_O, 2, mask=M),
                               np.concatenate(heads, axis=1) @ W_O, rtol=1e-12, atol=1e-13)
    # the first output sees the first token only: o_1 = x_1 W_V W_O
    np.testing.assert_allclose(multi_head_attention(X, W_Q, W_K, W_V, W_O, 2, mask=M)[0],
                               X[0] @ W_V @ W_O, rtol=1e-12)


def test_the_layer_rejects_bad_shapes_and_head_counts():
    rng = np.random.default_rng(4)
    X, W_Q, W_K, W_V, W_O = random_layer(rng, d=6)
    with pytest.raises(ValueError, match="n_heads = 4 must divide"):
        multi_head_attention(X, W_Q, W_K, W_V, W_O, 4)
    with pytest.raises(ValueError, match="one row per feature of X"):
        multi_head_attention(X[:, :5], W_Q, W_K, W_V, W_O, 2)
    with pytest.raises(ValueError, match="W_O must have one row per column of W_V"):
        multi_head_attention(X, W_Q, W_K, W_V, W_O[:4], 2)
    with pytest.raises(ValueError, match="same number of columns"):
        multi_head_attention(X, W_Q, W_K[:, :4], W_V, W_O, 2)
    with pytest.raises(ValueError, match="NaN"):
        multi_head_attention(np.full((2, 6), np.nan), W_Q, W_K, W_V, W_O, 2)


# -- circuits ---------------------------------------------------------------------------------

def test_circuits_reproduce_scores_and_outputs_and_have_rank_at_most_d_k():
    rng = np.random.default_rng(5)
    d, h = 12, 3
    X, W_Q, W_K, W_V, W_O = random_layer(rng, N=6, d=d, h=h)
    QK, OV = head_circuits(W_Q, W_K, W_V, W_O, h)
    assert QK.shape == OV.shape == (h, d, d)
    parts = head_outputs(X, W_Q, W_K, W_V, W_O, h)
    for i in range(h):
        assert np.linalg.matrix_rank(QK[i]) == np.linalg.matrix_rank(OV[i]) == d // h
        P = softmax(X @ QK[i] @ X.T / math.sqrt(d // h))
        np.testing.assert_allclose(P @ X @ OV[i], parts[i], rtol=1e-11, atol=1e-13)


# -- counts -----------------------------------------------------------------------------------

@pytest.mark.parametrize("h", [1, 2, 4, 8, 16])
def test_the_parameter_count_is_4_d_squared_for_every_divisor(h):
    counts = attention_parameters(64, h)
    assert counts["total"] == 4 * 64**2
    assert counts["W_Q"] == counts["W_O"] == 64**2


def test_parameter_count_with_an_explicit_head_width_and_bad_inputs():
    assert attention_parameters(10, 3, d_head=4)["total"] == 4 * 10 * 3 * 4
    with pytest.raises(ValueError, match="must divide d_model"):
        attention_parameters(10, 3)
    with pytest.raises(ValueError, match="d_head"):
        attention_parameters(10, 2, d_head=0)


# -- the readout error ------------------------------------------------------------------------

def test_readout_error_matches_a_large_simulation():
    rng = np.random.default_rng(6)
    n, d, m, h = 4, 3, 6, 2
    P = softmax(rng.standard_normal((h, n)))
    W = rng.standard_normal((h, d, m))
    T = rng.standard_normal((n, d, m))
    x = rng.standard_normal((200_000, n, d))
    o = np.einsum("ij,sjd,idm->sm", P, x, W)
    y = np.einsum("sjd,jdm->sm", x, T)
    err = ((o - y) ** 2).sum(axis=1)
    se = err.std() / math.sqrt(err.size)
    assert abs(err.mean() - readout_error(P, W, T)) < 4 * se


def test_one_head_explains_at_most_half_of_the_two_offset_target():
    """The bound of the chapter: for weights a, b on the two offsets and c elsewhere, the best
    map leaves 2d − d (a² + b²)/(a² + b² + Σ others²) ≥ d of the target's 2d."""
    rng = np.random.default_rng(7)
    d, n = 3, 6
    A = np.hstack([np.eye(d), np.zeros((d, d))])
    B = np.hstack([np.zeros((d, d)), np.eye(d)])
    T = np.zeros((n, d, 2 * d))
    T[1], T[2] = A, B
    for _ in range(20):
        p = softmax(rng.standard_normal(n) * 2)
        W = (p[1] * A + p[2] * B) / np.sum(p**2)  # the least-squares map
        best = readout_error(p[None], W[None], T)
        assert best == pytest.approx(2 * d - d * (p[1]**2 + p[2]**2) / np.sum(p**2), rel=1e-12)
        assert best >= d - 1e-12
        for _ in range(5):  # no other map does better
            other = W + 0.1 * rng.standard_normal(W.shape)
            assert readout_error(p[None], other[None], T) > best


@pytest.mark.parametrize("n_heads", [1, 2])
@pytest.mark.parametrize("beta", [0.0, 3.0])
def test_the_two_offset_layer_has_the_exact_error_of_a_simulation(n_heads, beta):
    """Run the task's layer on random contents; its error matches two_offset_error."""
    rng = np.random.default_rng(12)
    C = rng.standard_normal((3000, 8, 8))
    X = np.concatenate([C, np.broadcast_to(np.eye(8), (3000, 8, 8))], axis=2)
    Y = np.concatenate([np.roll(C, 1, axis=1), np.roll(C, 2, axis=1)], axis=2)
    layer = two_offset_layer(n_heads, beta)
    out = np.stack([multi_head_attention(x, *layer, n_heads) for x in X])
    err = np.sum((out - Y) ** 2, axis=2).mean(axis=1) / 16  # one value per sequence
    assert abs(err.mean() - two_offset_error(n_heads, beta)) < 4 * err.std() / math.sqrt(3000)


def test_the_two_offset_task_one_head_stays_at_half_two_heads_go_to_zero():
    p = two_offset_weights(1, 8.0)[0]
    bound = 1 - (p[1] ** 2 + p[2] ** 2) / (2 * np.sum(p**2))
    assert two_offset_error(1, 8.0) == pytest.approx(bound, rel=1e-12)
    assert all(two_offset_error(1, b) >= 0.5 for b in (0.0, 2.0, 8.0, 30.0))
    errors = [two_offset_error(2, b) for b in (0.0, 2.0, 4.0, 8.0, 16.0)]
    assert errors == sorted(errors, reverse=True) and errors[-1] < 1e-9
    T = two_offset_targets()
    assert T.shape == (8, 8, 16) and np.sum(T**2) == 16


def test_the_two_offset_task_has_one_or_two_heads():
    for h in (0, 3, 4):
        with pytest.raises(ValueError, match="n_heads"):
            two_offset_layer(h, 1.0)
    with pytest.raises(ValueError, match="beta"):
        two_offset_weights(1, float("nan"))


def test_readout_error_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="one map per head"):
        readout_error([[1.0]], np.ones((2, 1, 1)), np.ones((1, 1, 1)))
    with pytest.raises(ValueError, match="one target map per key"):
        readout_error([[0.5, 0.5]], np.ones((1, 1, 1)), np.ones((1, 1, 1)))
    with pytest.raises(ValueError, match="same shape"):
        readout_error([[1.0]], np.ones((1, 1, 2)), np.ones((1, 1, 1)))


# -- rank collapse ----------------------------------------------------------------------------

def test_rank_one_residual_is_the_smallest_distance_to_equal_rows():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((5, 3))
    r = rank_one_residual(X)
    for _ in range(20):
        x = X.mean(axis=0) + 0.1 * rng.standard_normal(3)
        assert np.linalg.norm(X - x) > r
    assert rank_one_residual(np.ones((4, 2)) * [3.0, -1.0]) == 0.0


def test_attention_stack_matches_layer_by_layer_attention():
    rng = np.random.default_rng(9)
    N, d, L = 6, 4, 3
    X = rng.standard_normal((N, d))
    W_Q, W_K, W_V = rng.standard_normal((3, L, d, d)) / math.sqrt(d)
    for residual in (False, True):
        Xs = attention_stack(X, W_Q, W_K, W_V, residual=residual, temperature=2.0)
        assert Xs.shape == (L + 1, N, d)
        Y = X
        for layer in range(L):
            out = attention(Y @ W_Q[layer] / 2.0, Y @ W_K[layer], Y @ W_V[layer])
            Y = Y + out if residual else out
            np.testing.assert_allclose(Xs[layer + 1], Y, rtol=1e-12, atol=1e-13)


def test_pure_attention_collapses_and_a_skip_connection_keeps_the_residual():
    rng = np.random.default_rng(10)
    N, d, L = 12, 12, 6
    X = rng.standard_normal((N, d))
    W_Q, W_K, W_V = rng.standard_normal((3, L, d, d)) / math.sqrt(d)
    r0 = rank_one_residual(X)
    pure = attention_stack(X, W_Q, W_K, W_V)
    skip = attention_stack(X, W_Q, W_K, W_V, residual=True)
    assert rank_one_residual(pure[-1]) < 1e-10 * r0
    assert rank_one_residual(skip[-1]) > 0.5 * r0


def test_attention_stack_rejects_bad_shapes():
    X = np.ones((3, 2))
    W = np.ones((2, 2, 2))
    with pytest.raises(ValueError, match="same number of layers"):
        attention_stack(X, W, W, np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="W_V must be"):
        attention_stack(X, W, W, np.ones((2, 2, 3)))
    with pytest.raises(ValueError, match="temperature"):
        attention_stack(X, W, W, W, temperature=0.0)


# -- the chapter's derivation -----------------------------------------------------------------

def test_the_chapters_multi_head_attention_equals_lib():
    ns = chapter_cell("heads", "derive-multi-head")
    rng = np.random.default_rng(11)
    X, W_Q, W_K, W_V, W_O = random_layer(rng, N=5, d=8)
    for h in (1, 2, 4):
        np.testing.assert_allclose(ns["multi_head"](X, W_Q, W_K, W_V, W_O, h),
                                   multi_head_attention(X, W_Q, W_K, W_V, W_O, h),
                                   rtol=1e-12, atol=1e-13)
