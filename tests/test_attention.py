"""lib.attention against finite differences, closed forms and the chapter's own definitions."""

from __future__ import annotations

import numpy as np
import pytest

from lib.attention import (
    attention,
    attention_weights,
    numerical_jacobian,
    scores,
    sigmoid,
    sigmoid_slope,
    softmax,
    softmax_jacobian,
)
from tests.conftest import chapter_cell

CHAPTER = "expectation-variance"

# -- softmax ------------------------------------------------------------------------------------

def test_softmax_is_a_probability_vector_and_shift_invariant():
    z = np.random.default_rng(0).standard_normal(7)
    p = softmax(z)
    assert p.shape == (7,) and np.all(p > 0) and p.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(softmax(z + 100.0), p, rtol=1e-12)
    np.testing.assert_allclose(p, np.exp(z) / np.exp(z).sum(), rtol=1e-12)


def test_softmax_temperature_divides_the_scores():
    z = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(softmax(z, temperature=4.0), softmax(z / 4.0), rtol=1e-12)
    assert softmax(z, temperature=1e-3).max() == pytest.approx(1.0)  # argmax
    np.testing.assert_allclose(softmax(z, temperature=1e6), np.full(3, 1 / 3), atol=1e-5)


def test_softmax_does_not_overflow_and_works_along_an_axis():
    p = softmax([1000.0, 0.0])
    assert np.all(np.isfinite(p)) and p[0] == pytest.approx(1.0)
    Z = np.array([[0.0, 0.0], [0.0, np.log(3.0)]])
    np.testing.assert_allclose(softmax(Z, axis=-1), [[0.5, 0.5], [0.25, 0.75]])
    np.testing.assert_allclose(softmax(Z, axis=0).sum(axis=0), [1.0, 1.0])


@pytest.mark.parametrize("z, message", [
    ([], "empty"), (3.0, "scalar"), ([1.0, np.nan], "NaN"), ([1.0, np.inf], "infinite"),
])
def test_softmax_rejects_bad_scores(z, message):
    with pytest.raises(ValueError, match=message):
        softmax(z)


@pytest.mark.parametrize("t", [0.0, -1.0, np.inf, "hot"])
def test_softmax_rejects_bad_temperature(t):
    with pytest.raises(ValueError, match="temperature"):
        softmax([1.0, 2.0], temperature=t)


# -- the Jacobian, against central finite differences ------------------------------------------

@pytest.mark.parametrize("seed, scale", [(0, 1.0), (1, 3.0), (2, 10.0)])
def test_softmax_jacobian_matches_finite_differences(seed, scale):
    z = scale * np.random.default_rng(seed).standard_normal(6)
    J = softmax_jacobian(z)
    np.testing.assert_allclose(J, numerical_jacobian(softmax, z), atol=1e-8)
    p = softmax(z)
    np.testing.assert_allclose(J, np.diag(p) - np.outer(p, p), atol=1e-15)
    np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-15)
    np.testing.assert_allclose(J, J.T, atol=1e-15)


def test_softmax_jacobian_with_temperature_matches_finite_differences():
    z = np.array([0.3, -1.2, 2.0, 0.0])
    J = softmax_jacobian(z, temperature=0.5)
    fd = numerical_jacobian(lambda v: softmax(v, temperature=0.5), z)
    np.testing.assert_allclose(J, fd, atol=1e-8)


def test_saturated_jacobian_is_nearly_zero():
    assert np.abs(softmax_jacobian([30.0, 0.0, 0.0, 0.0])).max() < 1e-12
    assert np.abs(softmax_jacobian([0.0, 0.0])).max() == pytest.approx(0.25)


def test_softmax_jacobian_rejects_bad_input():
    with pytest.raises(ValueError, match="1-D"):
        softmax_jacobian([[1.0, 2.0]])
    with pytest.raises(ValueError, match="empty"):
        softmax_jacobian([])
    with pytest.raises(ValueError, match="temperature"):
        softmax_jacobian([1.0, 2.0], temperature=0)


def test_numerical_jacobian_is_exact_for_linear_maps():
    A = np.array([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0]])
    np.testing.assert_allclose(numerical_jacobian(lambda v: A @ v, [0.1, 0.2, 0.3]), A, atol=1e-9)


def test_numerical_jacobian_rejects_bad_input():
    with pytest.raises(ValueError, match="eps"):
        numerical_jacobian(softmax, [1.0, 2.0], eps=0.0)
    with pytest.raises(ValueError, match="empty"):
        numerical_jacobian(softmax, [])


# -- the two-key softmax is a sigmoid of the gap ---------------------------------------------

def test_sigmoid_is_the_two_key_softmax():
    for z1, z2 in ((0.0, 0.0), (3.0, 1.0), (-2.0, 5.0)):
        assert sigmoid(z1 - z2) == pytest.approx(softmax([z1, z2])[0], rel=1e-12)
    assert float(sigmoid(0.0)) == 0.5
    assert sigmoid(800.0) == 1.0 and sigmoid(-800.0) == pytest.approx(0.0, abs=1e-300)


def test_sigmoid_slope_closed_forms():
    gaps = np.linspace(-12, 12, 49)
    np.testing.assert_allclose(sigmoid_slope(gaps), 1 / (4 * np.cosh(gaps / 2) ** 2), rtol=1e-10)
    fd = (sigmoid(gaps + 1e-6) - sigmoid(gaps - 1e-6)) / 2e-6
    np.testing.assert_allclose(sigmoid_slope(gaps), fd, rtol=1e-5, atol=1e-9)  # FD round-off
    assert float(sigmoid_slope(0.0)) == 0.25
    ratio = float(sigmoid_slope(0.0) / sigmoid_slope(8.0))
    assert ratio == pytest.approx(np.cosh(4.0) ** 2, rel=1e-12)
    assert round(ratio, 1) == 745.7  # the chapter's figure; the note's "about 750"
    # Tail: p(1 − p) ≈ e^{−|Δ|} with relative error about 2e^{−|Δ|}, on both sides.
    for gap in (8.0, -8.0, 16.0):
        rel = sigmoid_slope(gap) / np.exp(-abs(gap)) - 1
        assert abs(rel) < 2.1 * np.exp(-abs(gap))


@pytest.mark.parametrize("x, message", [([], "empty"), ([np.nan], "NaN")])
def test_sigmoid_rejects_bad_input(x, message):
    with pytest.raises(ValueError, match=message):
        sigmoid(x)
    with pytest.raises(ValueError, match=message):
        sigmoid_slope(x)


# -- scores and attention ----------------------------------------------------------------------

def test_scores_scaling_and_shapes():
    rng = np.random.default_rng(4)
    Q, K = rng.standard_normal((3, 16)), rng.standard_normal((5, 16))
    S = scores(Q, K, scale=False)
    assert S.shape == (3, 5)
    np.testing.assert_allclose(S, Q @ K.T)
    np.testing.assert_allclose(scores(Q, K), S / 4.0)


def test_scaled_scores_have_unit_variance():
    rng = np.random.default_rng(5)
    Q, K = rng.standard_normal((200, 64)), rng.standard_normal((200, 64))
    s = scores(Q, K).ravel()  # 40,000 scores, dependent through shared rows: loose tolerance
    assert abs(s.var() - 1.0) < 0.1 and abs(scores(Q, K, scale=False).var() / 64 - 1.0) < 0.1


@pytest.mark.parametrize("Q, K, message", [
    ([[1.0, 2.0]], [[1.0, 2.0, 3.0]], "same dimension"),
    ([1.0, 2.0], [[1.0, 2.0]], "2-D"),
    (np.zeros((0, 2)), [[1.0, 2.0]], "empty"),
    ([[np.nan, 1.0]], [[1.0, 2.0]], "NaN"),
])
def test_scores_reject_bad_shapes(Q, K, message):
    for f in (scores, attention_weights):
        with pytest.raises(ValueError, match=message):
            f(Q, K)


def test_attention_weights_rows_are_softmaxes_of_scores():
    rng = np.random.default_rng(6)
    Q, K = rng.standard_normal((4, 8)), rng.standard_normal((6, 8))
    W = attention_weights(Q, K)
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    np.testing.assert_allclose(W[2], softmax(Q[2] @ K.T / np.sqrt(8)))
    np.testing.assert_allclose(attention_weights(Q, K, scale=False)[1], softmax(Q[1] @ K.T))


def test_attention_is_the_weighted_average_of_values():
    rng = np.random.default_rng(7)
    Q, K, V = rng.standard_normal((2, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    out = attention(Q, K, V)
    assert out.shape == (2, 5)
    np.testing.assert_allclose(out, attention_weights(Q, K) @ V)


def test_attention_rejects_mismatched_values():
    with pytest.raises(ValueError, match="one row per key"):
        attention([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0]])
    with pytest.raises(ValueError, match="2-D"):
        attention([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0])


# -- the chapter's visible definitions agree with lib's -----------------------------------------

def test_chapter_softmax_agrees_with_lib():
    ns = chapter_cell(CHAPTER, "derive-softmax")
    rng = np.random.default_rng(8)
    for scale in (0.1, 1.0, 30.0):
        z = scale * rng.standard_normal(9)
        np.testing.assert_allclose(ns["softmax"](z), softmax(z), rtol=1e-14)


def test_chapter_sigmoid_slope_agrees_with_lib():
    ns = chapter_cell(CHAPTER, "derive-sigmoid-slope")
    gaps = np.linspace(-20.0, 20.0, 161)  # beyond, 1 − p₁ loses relative digits
    np.testing.assert_allclose(ns["sigmoid_slope"](gaps), sigmoid_slope(gaps), rtol=1e-6)
    assert ns["sigmoid_slope"](0.0) == 0.25


def test_chapter_softmax_jacobian_agrees_with_lib():
    ns = chapter_cell(CHAPTER, "derive-softmax-jacobian", chapter_cell(CHAPTER, "derive-softmax"))
    for seed in range(3):
        z = 3.0 * np.random.default_rng(seed).standard_normal(5)
        np.testing.assert_allclose(ns["softmax_jacobian"](z), softmax_jacobian(z), atol=1e-15)


def test_jacobian_facts_hold_on_random_rows():
    """PSD, J·1 = 0, ‖J‖₂ ≤ ½ (equality at a two-way tie), Σ|J_ij| = 2(1 − Σp²) ≤ 4(1 − p_max)."""
    rng = np.random.default_rng(3)
    for c in (0.01, 1.0, 5.0, 50.0):
        for z in c * rng.standard_normal((50, 7)):
            p, J = softmax(z), softmax_jacobian(z)
            eig = np.linalg.eigvalsh(J)
            assert eig.min() > -1e-15 and eig.max() <= 0.5
            np.testing.assert_allclose(J @ np.ones(7), 0.0, atol=1e-15)
            total = np.abs(J).sum()
            assert total == pytest.approx(2 * (1 - np.sum(p**2)), abs=1e-14)
            assert total <= 4 * (1 - p.max()) + 1e-15
    assert np.linalg.eigvalsh(softmax_jacobian([0.0, 0.0, -800.0])).max() == pytest.approx(0.5)
