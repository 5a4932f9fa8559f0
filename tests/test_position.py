"""lib.position against closed forms: rotations, relative scores, the paper's slopes, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lib
from lib.position import (
    alibi_bias,
    alibi_slopes,
    position_frequencies,
    rope,
    rope_matrix,
    shift_rotation,
    sinusoidal_encoding,
)

# -- frequencies and the sinusoidal encodings ----------------------------------------------


def test_frequencies_are_the_geometric_sequence_of_vaswani():
    d = 512
    omega = position_frequencies(d)
    np.testing.assert_allclose(omega, [10000.0 ** (-2 * i / d) for i in range(d // 2)],
                               rtol=1e-14)
    np.testing.assert_allclose(omega[1:] / omega[:-1], 10000.0 ** (-2 / d), rtol=1e-13)
    assert omega[0] == 1.0 and 2 * math.pi / omega[-1] < 2 * math.pi * 10000


def test_encoding_matches_the_papers_formula_entry_by_entry():
    d, positions = 8, np.array([0, 1, 5, 17, 300])
    P = sinusoidal_encoding(positions, d)
    for r, t in enumerate(positions):
        for i in range(d // 2):
            angle = t / 10000.0 ** (2 * i / d)
            assert P[r, 2 * i] == pytest.approx(math.sin(angle), abs=1e-14)
            assert P[r, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-14)


def test_every_encoding_has_squared_length_d_over_2():
    P = sinusoidal_encoding(np.arange(200), 64)
    np.testing.assert_allclose((P * P).sum(axis=1), 32.0, rtol=1e-13)


def test_encoding_dot_product_is_a_sum_of_cosines_of_the_offset():
    d = 16
    omega = position_frequencies(d)
    s, t = np.meshgrid(np.arange(40), np.arange(40), indexing="ij")
    P = sinusoidal_encoding(np.arange(40), d)
    closed = np.cos((s - t)[..., None] * omega).sum(axis=-1)
    np.testing.assert_allclose(P @ P.T, closed, atol=1e-12)


@pytest.mark.parametrize("delta", [0, 1, 7, -3, 2.5, 1000])
def test_shift_rotation_moves_every_encoding_by_delta_whatever_t(delta):
    d, t = 12, np.array([3.0, 4.0, 10.0, 250.0])
    R = shift_rotation(delta, d)
    np.testing.assert_allclose(sinusoidal_encoding(t, d) @ R.T,
                               sinusoidal_encoding(t + delta, d), atol=1e-11)
    np.testing.assert_allclose(R.T @ R, np.eye(d), atol=1e-14)
    np.testing.assert_allclose(R @ shift_rotation(-delta, d), np.eye(d), atol=1e-13)
    np.testing.assert_array_equal(R, rope_matrix(delta, d).T)  # one rotation: R(Δ)ᵀ


# -- rotary embeddings ---------------------------------------------------------------------


def rope_complex(x, positions, base=10000.0):
    """Reference: pair i as the complex number x_2i + i x_2i+1, times exp(i m ω_i)."""
    x = np.asarray(x, float)
    z = x[:, 0::2] + 1j * x[:, 1::2]
    z = z * np.exp(1j * np.asarray(positions, float)[:, None] * position_frequencies(x.shape[1],
                                                                                     base))
    out = np.empty_like(x)
    out[:, 0::2], out[:, 1::2] = z.real, z.imag
    return out


@pytest.mark.parametrize("seed", range(4))
def test_rope_equals_the_complex_rotation_and_its_matrix(seed):
    rng = np.random.default_rng(seed)
    d, n = 2 * int(rng.integers(1, 9)), int(rng.integers(1, 7))
    x, m = rng.standard_normal((n, d)), rng.integers(0, 5000, size=n)
    y = rope(x, m)
    np.testing.assert_allclose(y, rope_complex(x, m), atol=1e-12)
    by_matrix = np.array([rope_matrix(mi, d) @ xi for xi, mi in zip(x, m, strict=True)])
    np.testing.assert_allclose(y, by_matrix, atol=1e-12)


def test_rope_preserves_lengths():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((50, 32))
    y = rope(x, rng.integers(0, 10**6, size=50))
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), np.linalg.norm(x, axis=1), rtol=1e-13)


def test_rope_score_depends_only_on_the_offset():
    rng = np.random.default_rng(11)
    q, k = rng.standard_normal((1, 16)), rng.standard_normal((1, 16))
    for offset in (0, 1, 9, 400):
        scores = [(rope(q, [n + offset]) @ rope(k, [n]).T)[0, 0] for n in (0, 3, 77, 5000)]
        np.testing.assert_allclose(scores, scores[0], atol=1e-10)
        R = rope_matrix(offset, 16)
        assert scores[0] == pytest.approx((q @ R.T @ k.T)[0, 0], abs=1e-10)


def test_rope_matrices_compose_as_rotations():
    R3, R5 = rope_matrix(3, 8), rope_matrix(5, 8)
    np.testing.assert_allclose(R3.T @ R5, rope_matrix(2, 8), atol=1e-14)
    np.testing.assert_allclose(R3 @ R5, rope_matrix(8, 8), atol=1e-14)


def test_rope_matrix_at_a_negative_position_is_the_transpose():
    for m in (1, 3, 250.5):
        np.testing.assert_allclose(rope_matrix(-m, 8), rope_matrix(m, 8).T, atol=1e-15)
    # so R(m)ᵀ R(n) = R(n − m) also when n < m: R(5)ᵀ R(3) = R(−2)
    np.testing.assert_allclose(rope_matrix(5, 8).T @ rope_matrix(3, 8), rope_matrix(-2, 8),
                               atol=1e-14)
    np.testing.assert_allclose(rope_matrix(-2, 8) @ rope_matrix(2, 8), np.eye(8), atol=1e-15)


def test_rope_at_position_zero_is_the_identity():
    x = np.arange(12.0).reshape(2, 6)
    np.testing.assert_array_equal(rope(x, [0, 0]), x)


# -- ALiBi ---------------------------------------------------------------------------------


def test_alibi_slopes_for_eight_heads_are_the_papers():
    np.testing.assert_array_equal(alibi_slopes(8), [2.0 ** -h for h in range(1, 9)])
    np.testing.assert_allclose(alibi_slopes(16)[1::2], alibi_slopes(8), rtol=1e-15)


def test_alibi_bias_is_minus_slope_times_distance():
    B = alibi_bias(5, 0.25)
    for i in range(5):
        for j in range(5):
            assert B[i, j] == -0.25 * abs(i - j)
    assert not np.signbit(np.diag(B)).any()


def test_alibi_weights_decay_geometrically_with_distance():
    N, m = 10, 0.5
    P = lib.masked_softmax(alibi_bias(N, m), lib.causal_mask(N))  # equal content scores
    row = P[-1]
    np.testing.assert_allclose(row[:-1] / row[1:], math.exp(-m), rtol=1e-13)


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: position_frequencies(7), "d must be even"),
    (lambda: position_frequencies(0), "d must be a positive integer"),
    (lambda: position_frequencies(4, base=0.0), "base must be a positive number"),
    (lambda: sinusoidal_encoding([0, -1], 4), "positions must be non-negative"),
    (lambda: sinusoidal_encoding([], 4), "positions is empty"),
    (lambda: sinusoidal_encoding([[0, 1]], 4), "positions must be a 1-D vector"),
    (lambda: sinusoidal_encoding([0, np.nan], 4), "NaN or infinite"),
    (lambda: rope(np.ones((2, 3)), [0, 1]), "d must be even"),
    (lambda: rope(np.ones((2, 4)), [0, 1, 2]), "one entry per row"),
    (lambda: rope(np.ones((2, 4)), [0, -2]), "positions must be non-negative"),
    (lambda: rope(np.ones(4), [0]), "x must be a 2-D matrix"),
    (lambda: rope_matrix(np.nan, 4), "m must be finite"),
    (lambda: rope_matrix("one", 4), "m must be a real number"),
    (lambda: rope_matrix(1, 5), "d must be even"),
    (lambda: shift_rotation(np.inf, 4), "delta must be finite"),
    (lambda: shift_rotation("one", 4), "delta must be a real number"),
    (lambda: alibi_slopes(0), "n_heads must be a positive integer"),
    (lambda: alibi_bias(4, -0.5), "slope must be a non-negative number"),
    (lambda: alibi_bias(2.5, 0.5), "N must be a positive integer"),
])
def test_bad_input_raises_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- the chapter's derivations against lib -------------------------------------------------


def test_chapters_sinusoidal_derivation_equals_lib():
    from tests.conftest import chapter_cell

    sinusoidal = chapter_cell("position", "derive-sinusoidal")["sinusoidal"]
    for d, base in ((2, 10000.0), (64, 10000.0), (10, 50.0)):
        t = np.array([0, 1, 2, 9, 123, 4567])
        np.testing.assert_allclose(sinusoidal(t, d, base), sinusoidal_encoding(t, d, base),
                                   atol=1e-12)


def test_chapters_complex_rope_equals_lib():
    from tests.conftest import chapter_cell

    rope_chapter = chapter_cell("position", "derive-rope")["rope_complex"]
    rng = np.random.default_rng(12)
    for d in (2, 8, 64):
        x, m = rng.standard_normal((9, d)), rng.integers(0, 20000, size=9)
        np.testing.assert_allclose(rope_chapter(x, m), rope(x, m), atol=1e-11)
        np.testing.assert_allclose(rope_chapter(x, m, base=100.0), rope(x, m, base=100.0),
                                   atol=1e-11)
