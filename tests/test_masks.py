"""lib.masks against references: finite differences, per-prefix and per-sequence loops, errors."""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import jupytext
import numpy as np
import pytest

import lib
from lib.attention import attention, numerical_jacobian, softmax
from lib.masks import (
    causal_mask,
    constant_scores,
    constant_softmax,
    masked_attention,
    masked_softmax,
    padding_mask,
    sliding_window_mask,
)

CHAPTER = Path(__file__).resolve().parent.parent / "book" / "masks.md"


def chapter_cell(tag: str, ns: dict | None = None) -> dict:
    """Run the chapter's code cell tagged ``tag`` (in ``ns``); return the namespace."""
    nb = jupytext.read(CHAPTER, fmt="md:myst")
    cells = [c.source for c in nb.cells
             if c.cell_type == "code" and tag in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}, found {len(cells)}"
    ns = {"np": np, "lib": lib} if ns is None else ns
    with contextlib.redirect_stdout(io.StringIO()):
        exec(cells[0], ns)
    return ns


def random_case(rng, shape):
    """Random scores of ``shape`` and a random mask with at least one allowed key per row."""
    S = rng.standard_normal(shape) * 3.0
    mask = rng.random(shape) < 0.5
    first = rng.integers(0, shape[-1], size=shape[:-1])
    np.put_along_axis(mask, first[..., None], True, axis=-1)
    return S, mask


# -- the masked softmax ---------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_masked_softmax_is_the_softmax_renormalized_over_allowed_keys(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 7, size=int(rng.integers(1, 4))))
    S, mask = random_case(rng, shape)
    P = masked_softmax(S, mask)
    assert P.shape == S.shape
    assert np.all(P[~mask] == 0.0)
    np.testing.assert_allclose(P.sum(axis=-1), 1.0, rtol=1e-12)
    for idx in np.ndindex(shape[:-1]):
        allowed = mask[idx]
        np.testing.assert_allclose(P[idx][allowed], softmax(S[idx][allowed]), rtol=1e-12)


def test_masked_softmax_along_another_axis_and_with_a_broadcast_mask():
    rng = np.random.default_rng(7)
    S = rng.standard_normal((4, 5))
    key_mask = np.array([True, True, False, True, False])  # (5,) broadcasts to (4, 5)
    np.testing.assert_allclose(masked_softmax(S, key_mask),
                               masked_softmax(S, np.broadcast_to(key_mask, S.shape)))
    col_mask = np.array([[True], [False], [True], [True]])  # (4, 1): along axis 0
    P = masked_softmax(S, np.broadcast_to(col_mask, S.shape), axis=0)
    np.testing.assert_allclose(P, masked_softmax(S.T, col_mask.T).T, rtol=1e-12)


def test_masked_softmax_equals_an_additive_minus_infinity():
    rng = np.random.default_rng(8)
    S, mask = random_case(rng, (6, 9))
    additive = np.where(mask, 0.0, -np.inf)
    e = np.exp(S + additive - (S + additive).max(axis=-1, keepdims=True))
    np.testing.assert_allclose(masked_softmax(S, mask), e / e.sum(axis=-1, keepdims=True),
                               rtol=1e-12)


def test_fully_masked_rows_are_zero_and_leave_other_rows_alone():
    S = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    mask = np.array([[False, False, False], [True, False, True]])
    P = masked_softmax(S, mask)
    assert P[0].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(P[1], [1 / (1 + np.e**2), 0.0, np.e**2 / (1 + np.e**2)])


def test_masked_softmax_does_not_overflow():
    P = masked_softmax([1000.0, -1000.0, 999.0], [True, True, True])
    assert np.all(np.isfinite(P)) and P[0] == pytest.approx(1 / (1 + np.exp(-1.0)))


@pytest.mark.parametrize("seed", range(4))
def test_masked_jacobian_has_zero_rows_and_columns_by_finite_differences(seed):
    rng = np.random.default_rng(10 + seed)
    z, mask = random_case(rng, (8,))
    p = masked_softmax(z, mask)
    J_num = numerical_jacobian(lambda s: masked_softmax(s, mask), z)
    J = np.diag(p) - np.outer(p, p)  # the chapter-1 Jacobian at the masked p
    np.testing.assert_allclose(J_num, J, atol=1e-8)
    assert np.all(J[~mask, :] == 0.0) and np.all(J[:, ~mask] == 0.0)
    assert np.all(J_num[:, ~mask] == 0.0)  # a masked score does not move any weight, exactly
    block = np.ix_(mask, mask)
    np.testing.assert_allclose(J[block], lib.softmax_jacobian(z[mask]), atol=1e-15)


@pytest.mark.parametrize("scores, mask, message", [
    ([1.0, 2.0], [1, 0], "boolean"),
    ([1.0, 2.0], [0.0, -np.inf], "boolean"),
    ([1.0, 2.0], [True, False, True], "does not match"),
    ([[1.0, 2.0]], [[True], [False]], "does not match"),  # would enlarge the scores
    ([], [], "empty"),
    ([1.0, np.nan], [True, True], "NaN"),
    (1.0, True, "scalar"),
])
def test_masked_softmax_rejects_bad_input(scores, mask, message):
    with pytest.raises(ValueError, match=message):
        masked_softmax(scores, mask)


# -- mask builders --------------------------------------------------------------------------

def test_causal_mask_is_lower_triangular_with_n_n_plus_1_over_2_entries():
    for N in (1, 2, 5, 16):
        M = causal_mask(N)
        assert M.dtype == bool and M.shape == (N, N)
        assert np.array_equal(M, np.tril(np.ones((N, N), dtype=bool)))
        assert M.sum() == N * (N + 1) // 2



def test_causal_mask_with_fewer_queries_is_aligned_bottom_right_as_in_flashattention():
    # FlashAttention's README (changelog 2.1): seqlen_q = 2, seqlen_k = 5 gives 11110 / 11111
    assert causal_mask(2, 5).astype(int).tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]
    for N, n_k in ((1, 1), (3, 5), (4, 9)):
        i, j = np.indices((N, n_k))
        assert np.array_equal(causal_mask(N, n_k), j <= i + n_k - N)
        assert np.array_equal(causal_mask(N, n_k)[:, -N:], causal_mask(N))  # last N keys
    with pytest.raises(ValueError, match="N <= n_k"):
        causal_mask(5, 2)  # more queries than keys would leave rows empty

def test_sliding_window_mask():
    M = sliding_window_mask(6, 3)
    for i in range(6):
        assert np.flatnonzero(M[i]).tolist() == list(range(max(0, i - 2), i + 1))
    assert np.array_equal(sliding_window_mask(6, 6), causal_mask(6))
    assert np.array_equal(sliding_window_mask(6, 1), np.eye(6, dtype=bool))
    S = sliding_window_mask(6, 2, causal=False)
    assert np.array_equal(S, S.T) and S.sum() == 6 + 2 * 5


def test_padding_mask_masks_keys_and_optionally_queries():
    M = padding_mask([3, 1], 4)
    assert M.shape == (2, 4, 4) and M.dtype == bool
    assert np.all(M[0][:, :3]) and not np.any(M[0][:, 3:])
    assert np.all(M[1][:, :1]) and not np.any(M[1][:, 1:])
    Mq = padding_mask([3, 1], 4, mask_queries=True)
    assert np.array_equal(Mq[0], np.outer(np.arange(4) < 3, np.arange(4) < 3))
    assert not np.any(Mq[1][1:])


@pytest.mark.parametrize("call, message", [
    (lambda: causal_mask(0), "positive integer"),
    (lambda: causal_mask(2.5), "positive integer"),
    (lambda: sliding_window_mask(4, 0), "positive integer"),
    (lambda: padding_mask([2, 5], 4), "exceeds"),
    (lambda: padding_mask([0], 4), "positive integer"),
    (lambda: padding_mask([], 4), "non-empty"),
    (lambda: padding_mask([[1, 2]], 4), "1-D"),
])
def test_mask_builders_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- masked attention against loops ---------------------------------------------------------

def test_causal_attention_equals_attention_on_each_prefix():
    rng = np.random.default_rng(20)
    N, d_k, d_v = 9, 4, 3
    Q, K, V = (rng.standard_normal((N, d)) for d in (d_k, d_k, d_v))
    out = masked_attention(Q, K, V, causal_mask(N))
    for t in range(1, N + 1):
        np.testing.assert_allclose(out[t - 1], attention(Q[t - 1:t], K[:t], V[:t])[0],
                                   rtol=1e-12, atol=1e-14)


def test_causal_output_does_not_depend_on_future_tokens_exactly():
    rng = np.random.default_rng(21)
    N, d = 8, 4
    X = rng.standard_normal((N, d))
    W_Q, W_K, W_V = (rng.standard_normal((d, d)) for _ in range(3))
    for t in range(1, N):
        Y = X.copy()
        Y[t:] = rng.standard_normal((N - t, d)) * 10
        O_x = masked_attention(X @ W_Q, X @ W_K, X @ W_V, causal_mask(N))
        O_y = masked_attention(Y @ W_Q, Y @ W_K, Y @ W_V, causal_mask(N))
        assert np.array_equal(O_x[:t], O_y[:t])
        assert not np.allclose(O_x[t:], O_y[t:])


def test_padded_batch_equals_each_sequence_alone():
    rng = np.random.default_rng(22)
    lengths, N, d_k, d_v = [5, 2, 7, 1], 7, 4, 3
    Q, K, V = (rng.standard_normal((len(lengths), N, d)) for d in (d_k, d_k, d_v))
    out = masked_attention(Q, K, V, padding_mask(lengths, N))
    for b, L in enumerate(lengths):
        alone = attention(Q[b, :L], K[b, :L], V[b, :L])
        np.testing.assert_allclose(out[b, :L], alone, rtol=1e-12, atol=1e-14)
    out_q = masked_attention(Q, K, V, padding_mask(lengths, N, mask_queries=True))
    for b, L in enumerate(lengths):
        assert np.all(out_q[b, L:] == 0.0)
        np.testing.assert_array_equal(out_q[b, :L], out[b, :L])


@pytest.mark.parametrize("seed", range(3))
def test_masked_attention_with_random_shapes_against_a_loop(seed):
    rng = np.random.default_rng(30 + seed)
    B, N_q, N_k, d_k, d_v = (int(n) for n in rng.integers(1, 6, size=5))
    Q = rng.standard_normal((B, N_q, d_k))
    K = rng.standard_normal((B, N_k, d_k))
    V = rng.standard_normal((B, N_k, d_v))
    _, mask = random_case(rng, (B, N_q, N_k))
    out = masked_attention(Q, K, V, mask)
    assert out.shape == (B, N_q, d_v)
    for b in range(B):
        for i in range(N_q):
            keys = mask[b, i]
            expected = attention(Q[b, i:i + 1], K[b][keys], V[b][keys])[0]
            np.testing.assert_allclose(out[b, i], expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shapes, mask_shape, message", [
    (((3, 2), (4, 3), (4, 1)), (3, 4), "d_k"),
    (((3, 2), (4, 2), (5, 1)), (3, 4), "one row per key"),
    (((2,), (4, 2), (4, 1)), (1, 4), "at least 2 dimensions"),
    (((3, 2), (4, 2), (4, 1)), (3, 5), "does not match"),
])
def test_masked_attention_rejects_bad_shapes(shapes, mask_shape, message):
    Q, K, V = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError, match=message):
        masked_attention(Q, K, V, np.ones(mask_shape, dtype=bool))


# -- the chapter's own derivation -------------------------------------------------------------

def test_chapter_masked_softmax_agrees_with_lib():
    ns = chapter_cell("derive-masked-softmax")
    rng = np.random.default_rng(40)
    S, mask = random_case(rng, (6, 7))
    np.testing.assert_allclose(ns["masked_softmax"](S, mask), masked_softmax(S, mask),
                               rtol=1e-12)


def test_chapter_exact_means_agree_with_monte_carlo():
    ns = chapter_cell("exact-means", {"np": np, "lib": lib, "math": math})
    T = (1, 2, 8)
    exact = ns["exact_means"](T, 0.05)  # rows of (E[sum p²], E[H])
    np.testing.assert_allclose(exact[0], [1.0, 0.0], atol=1e-9)  # one key: p = 1, H = 0
    rng = np.random.default_rng(41)
    n = 200_000
    for t, (sum_p2, H) in zip(T[1:], exact[1:], strict=True):
        p = softmax(rng.standard_normal((n, t)), axis=-1)
        for draws, value in (((p**2).sum(axis=1), sum_p2), (-(p * np.log(p)).sum(axis=1), H)):
            assert abs(draws.mean() - value) < 4 * draws.std() / math.sqrt(n)


# -- finite mask constants ------------------------------------------------------------------

def test_constant_softmax_leak_is_r_over_one_plus_r():
    rng = np.random.default_rng(42)
    z = rng.standard_normal(6)
    keep = np.array([True, False, True, True, False, True])
    for c in (-5.0, -10.0):
        r_add = math.exp(c) * np.exp(z[~keep]).sum() / np.exp(z[keep]).sum()
        r_repl = math.exp(c) * (~keep).sum() / np.exp(z[keep]).sum()
        for replace, r in ((False, r_add), (True, r_repl)):
            leak = constant_softmax(z, keep, c, np.float64, replace)[~keep].sum()
            assert leak == pytest.approx(r / (1 + r), rel=1e-12)


def test_constant_mask_rounds_and_overflows_in_its_type():
    keep = np.zeros(4, dtype=bool)
    z = np.array([2.0, -1.0, 0.5, 3.0])
    # float16 near -2000 has spacing 1: 0.5 - 2000 is a tie and rounds to even, -2000
    assert (constant_scores(z, keep, -2000.0, np.float16).astype(float) + 2000).tolist() == \
        [2.0, -1.0, 0.0, 3.0]
    # finfo.min of float16 plus any score <= -16 overflows; all overflowing gives NaN
    assert np.isneginf(constant_scores(np.array([-16.0]), keep[:1], None, np.float16)).all()
    p = constant_softmax(z - 19, keep, None, np.float16, softmax_dtype=np.float32)
    assert np.isnan(p).all()
    # a replaced constant makes an empty row uniform, in any type where it is finite
    for dt in (np.float16, np.float32, np.float64):
        np.testing.assert_array_equal(constant_softmax(z, keep, -30.0, dt, replace=True), 0.25)
    # -inf gives NaN in an empty row, and the same weights as masked_softmax otherwise
    assert np.isnan(constant_softmax(z, keep, -np.inf, np.float64)).all()
    rows = np.array([True, True, False, False])
    np.testing.assert_allclose(constant_softmax(z, rows, -np.inf, np.float64),
                               masked_softmax(z, rows), rtol=1e-15)


def test_constant_softmax_works_row_by_row():
    rng = np.random.default_rng(43)
    S, mask = random_case(rng, (3, 5))
    P = constant_softmax(S, mask, -1e4, np.float64)
    for row in range(3):
        np.testing.assert_allclose(P[row], constant_softmax(S[row], mask[row], -1e4, np.float64))
