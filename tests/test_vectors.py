"""Unit tests of lib.vectors (and the vector plots): closed forms, references, bad input."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from numpy.testing import assert_allclose

import lib
from lib import plotting
from lib.vectors import (
    angle,
    cosine,
    cosine_pdf,
    cosine_tail,
    dot,
    greedy_packing,
    keys_at_cosines,
    norm,
    packing_lower_bound,
    random_cosines,
    sample_cosines,
    scalar_projection,
    vector_projection,
)
from tests.conftest import chapter_cell

# --- the worked examples of the chapter -----------------------------------------------------


def test_dot_worked_example_and_symmetry():
    assert dot([3, 4], [4, 3]) == 24.0
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(7), rng.standard_normal(7)
    assert dot(a, b) == pytest.approx(dot(b, a))
    assert dot(a, b) == pytest.approx(float(np.sum(a * b)))


def test_norm_and_cosine_examples():
    assert norm([3, 4]) == 5.0
    assert norm([1, 1]) == pytest.approx(math.sqrt(2))
    assert cosine([1, 1], [5, 5]) == pytest.approx(1.0)
    assert cosine([1, 0], [-2, 0]) == pytest.approx(-1.0)
    assert cosine([3, 4], [4, 3]) == pytest.approx(24 / 25)


def test_angle_and_projection_examples():
    assert angle([1, 0], [0, 2]) == pytest.approx(90.0)
    assert angle([1, 0], [1, 1]) == pytest.approx(45.0)
    assert angle([1, 0], [-1, 0], degrees=False) == pytest.approx(math.pi)
    assert scalar_projection([3, 4], [4, 3]) == pytest.approx(4.8)
    assert_allclose(vector_projection([3, 4], [4, 3]), [3.84, 2.88])


def test_law_of_cosines_on_random_vectors():
    rng = np.random.default_rng(2)
    for d in (2, 3, 10, 100):
        a, b = rng.standard_normal(d), rng.standard_normal(d)
        lhs = norm(a - b) ** 2
        rhs = norm(a) ** 2 + norm(b) ** 2 - 2 * norm(a) * norm(b) * math.cos(
            angle(a, b, degrees=False))
        assert lhs == pytest.approx(rhs, rel=1e-12)
        assert dot(a, b) == pytest.approx(norm(a) * norm(b) * cosine(a, b), rel=1e-12)


def test_projection_residual_is_orthogonal():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    residual = a - vector_projection(a, b)
    assert dot(residual, b) == pytest.approx(0.0, abs=1e-12)
    assert norm(vector_projection(a, b)) == pytest.approx(abs(scalar_projection(a, b)))


def test_chapter_vector_projection_agrees_with_lib():
    ns = chapter_cell("dot-products", "derive-vector-projection", {
        "np": np, "lib": lib, "a": np.array([3.0, 4.0]), "b": np.array([4.0, 3.0])})
    assert_allclose(ns["shadow"], [3.84, 2.88])
    rng = np.random.default_rng(7)
    for d in (2, 5, 50):
        a, b = rng.standard_normal(d), rng.standard_normal(d)
        assert_allclose(ns["vector_projection"](a, b), vector_projection(a, b), rtol=1e-12)


# --- random directions: closed forms with explicit tolerances --------------------------------


@pytest.mark.parametrize("d", [3, 10, 100])
def test_random_cosines_mean_zero_variance_one_over_d(d):
    n = 40_000
    c = random_cosines(d, n, np.random.default_rng(d))
    # E[cos] = 0 and Var(cos) = 1/d exactly; 5 standard errors of tolerance.
    assert abs(c.mean()) < 5 * math.sqrt(1 / d / n)
    sd_of_var = math.sqrt(2 / n) / d  # approximate standard error of the sample variance
    assert abs(c.var() - 1 / d) < 5 * sd_of_var + 1e-3 / d
    assert np.all(np.abs(c) <= 1)


@pytest.mark.parametrize("d", [2, 3, 10, 1000])
def test_sample_cosines_matches_simulation_and_pdf(d):
    rng = np.random.default_rng(10 + d)
    exact = sample_cosines(d, 20_000, rng)
    simulated = random_cosines(d, 4_000, rng)
    assert np.all(np.abs(exact) <= 1)
    assert exact.var() == pytest.approx(1 / d, rel=0.05)
    qs = [0.1, 0.25, 0.5, 0.75, 0.9]
    assert_allclose(np.quantile(simulated, qs), np.quantile(exact, qs),
                    atol=4 / math.sqrt(4_000) / math.sqrt(d) * 3)


def test_cosine_pdf_closed_forms():
    t = np.linspace(-0.9, 0.9, 7)
    assert_allclose(cosine_pdf(t, 3), 0.5)  # d = 3: uniform (Archimedes)
    assert_allclose(cosine_pdf(t, 2), 1 / (np.pi * np.sqrt(1 - t**2)))  # arcsine law
    for d in (2, 3, 5, 50, 1000):
        grid = np.linspace(-1, 1, 200_001)[1:-1]
        f = cosine_pdf(grid, d)
        mass = np.sum((f[1:] + f[:-1]) / 2 * np.diff(grid))
        assert mass == pytest.approx(1.0, abs=5e-3 if d == 2 else 1e-4)
    assert cosine_pdf(1.0, 3) == pytest.approx(0.5)
    assert cosine_pdf(1.0, 5) == 0.0


def test_cosine_tail_closed_forms_and_bound():
    assert cosine_tail(3, 0.5) == pytest.approx(0.5, abs=1e-9)  # uniform on [-1, 1]
    assert cosine_tail(10, 0.0) == pytest.approx(1.0, abs=1e-9)
    assert cosine_tail(2, math.sqrt(0.5)) == pytest.approx(0.5)  # 45°: half the circle
    for d in (10, 100, 1000):
        for eps in (0.05, 0.1, 0.2):
            assert cosine_tail(d, eps) <= 2 * math.exp(-d * eps**2 / 2) + 1e-12
    c = sample_cosines(100, 100_000, np.random.default_rng(4))
    assert np.mean(np.abs(c) >= 0.2) == pytest.approx(cosine_tail(100, 0.2), abs=3e-3)


def test_packing_lower_bound_is_exponential_and_consistent():
    assert packing_lower_bound(3, 0.5) == 1.0
    b = [packing_lower_bound(d, 0.2) for d in (100, 200, 400)]
    assert b[0] < b[1] < b[2]
    # log N grows at least like d ε²/2 minus a constant (the Gaussian-tail bound).
    assert math.log(b[2]) >= 400 * 0.04 / 2 - math.log(4)
    # a count of vectors: a whole number, ⌈⌊1/p⌋ / 2⌉
    p = cosine_tail(100, 0.1)
    assert packing_lower_bound(100, 0.1) == math.ceil(math.floor(1 / p) / 2) == 2
    assert all(x == int(x) for x in b)


def test_packing_lower_bound_uses_the_exact_tail_not_its_closed_form_bound():
    # The chapter quotes both: ⌈⌊1/p⌋/2⌉ with the exact p, and the weaker closed form
    # ⌈⌊e^{d ε²/2}/2⌋/2⌉ that follows from p ≤ 2 e^{-d ε²/2}.
    for d in (50, 100, 512, 1000, 4096):
        for eps in (0.1, 0.2, 0.3):
            closed = math.ceil(math.floor(math.exp(d * eps**2 / 2) / 2) / 2)
            assert packing_lower_bound(d, eps) >= closed
    assert packing_lower_bound(512, 0.1) == 21  # the chapter's figure; the closed form gives 3
    assert math.ceil(math.floor(math.exp(512 * 0.01 / 2) / 2) / 2) == 3


def test_greedy_packing_is_valid():
    rng = np.random.default_rng(5)
    kept = greedy_packing(16, 0.3, 3_000, rng, chunk=256)
    m = kept.shape[0]
    assert m >= 16
    assert_allclose(np.linalg.norm(kept, axis=1), 1.0)
    gram = np.abs(kept @ kept.T) - np.eye(m)
    assert gram.max() <= 0.3 + 1e-12
    assert greedy_packing(2, 0.1, 500, np.random.default_rng(0)).shape[0] == 2


def test_greedy_packing_keeps_what_a_one_by_one_greedy_keeps():
    # Reference: try the same candidates one at a time against every vector kept so far.
    for d, eps, n, chunk in ((8, 0.3, 2_000, 512), (24, 0.3, 3_000, 1024), (16, 0.2, 1_500, 100)):
        c = np.random.default_rng(d).standard_normal((n, d))
        c /= np.linalg.norm(c, axis=1, keepdims=True)
        reference = []
        for v in c:
            if all(abs(float(v @ w)) <= eps for w in reference):
                reference.append(v)
        for size in (n, chunk):  # one chunk, or several: the same candidates, the same choice
            kept = greedy_packing(d, eps, n, np.random.default_rng(d), chunk=size)
            assert_allclose(kept, np.array(reference))


# --- bad input: a clear ValueError, never a silent NaN ---------------------------------------


@pytest.mark.parametrize("f", [dot, cosine, angle, scalar_projection, vector_projection])
def test_mismatched_dimensions(f):
    with pytest.raises(ValueError, match="same dimension"):
        f([1, 2, 3], [1, 2])


@pytest.mark.parametrize("f", [dot, cosine, angle, scalar_projection, vector_projection])
def test_empty_and_non_finite(f):
    with pytest.raises(ValueError, match="empty"):
        f([], [])
    with pytest.raises(ValueError, match="NaN or infinite"):
        f([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        f([1.0, 2.0], [np.inf, 2.0])
    with pytest.raises(ValueError, match="1-D"):
        f([[1.0, 2.0]], [[1.0, 2.0]])


def test_norm_bad_input():
    with pytest.raises(ValueError, match="empty"):
        norm([])
    with pytest.raises(ValueError, match="NaN"):
        norm([np.nan])


@pytest.mark.parametrize("f", [cosine, angle])
def test_zero_vector_has_no_direction(f):
    with pytest.raises(ValueError, match="zero vector"):
        f([0.0, 0.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="zero vector"):
        f([1.0, 2.0], [0.0, 0.0])


@pytest.mark.parametrize("f", [scalar_projection, vector_projection])
def test_projection_onto_zero_vector(f):
    with pytest.raises(ValueError, match="zero vector"):
        f([1.0, 2.0], [0.0, 0.0])


@pytest.mark.parametrize("f", [random_cosines, sample_cosines])
def test_random_cosine_bad_params(f):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="at least 2"):
        f(1, 10, rng)
    with pytest.raises(ValueError, match="positive integer"):
        f(0, 10, rng)
    with pytest.raises(ValueError, match="positive integer"):
        f(3, 0, rng)
    with pytest.raises(ValueError, match="positive integer"):
        f(2.5, 10, rng)
    with pytest.raises(ValueError, match="Generator"):
        f(3, 10, 0)


def test_cosine_pdf_bad_input():
    with pytest.raises(ValueError, match="at least 2"):
        cosine_pdf(0.0, 1)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        cosine_pdf([0.5, 1.5], 3)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        cosine_pdf([np.nan], 3)
    with pytest.raises(ValueError, match="empty"):
        cosine_pdf([], 3)


def test_tail_and_bound_bad_input():
    for f in (cosine_tail, packing_lower_bound):
        with pytest.raises(ValueError, match=r"\[0, 1\)"):
            f(10, 1.0)
        with pytest.raises(ValueError, match=r"\[0, 1\)"):
            f(10, -0.1)
        with pytest.raises(ValueError, match=r"\[0, 1\)"):
            f(10, "wide")
        with pytest.raises(ValueError, match="at least 2"):
            f(1, 0.1)
    with pytest.raises(ValueError, match="at least 3"):
        cosine_tail(10, 0.1, points=2)


def test_greedy_packing_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="at least 2"):
        greedy_packing(1, 0.1, 10, rng)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        greedy_packing(4, 1.5, 10, rng)
    with pytest.raises(ValueError, match="positive integer"):
        greedy_packing(4, 0.1, 0, rng)
    with pytest.raises(ValueError, match="Generator"):
        greedy_packing(4, 0.1, 10, None)


# --- the vector plots -------------------------------------------------------------------------


def test_plot_vectors_2d_draws_the_shadow():
    ax = plotting.plot_vectors_2d([3, 4], [4, 3])
    parts = {a.get_gid(): a for a in ax.get_children() if a.get_gid()}
    x, y = parts["shadow"].get_data()
    assert math.hypot(x[1] - x[0], y[1] - y[0]) == pytest.approx(4.8)  # ‖a‖ cos θ = 24 / 5
    # drawn beside b, on the side away from a, so that b does not cover it
    b_hat = np.array([4.0, 3.0]) / 5
    normal = np.array([-b_hat[1], b_hat[0]])  # a = (3, 4) lies on this side of b
    start = np.array([x[0], y[0]])
    assert start @ normal < -0.1 and abs(start @ b_hat) < 1e-12
    plotting.update_vectors_2d(ax, [0, 2], [3, 0])  # perpendicular: the shadow vanishes
    x, y = parts["shadow"].get_data()
    assert math.hypot(x[1] - x[0], y[1] - y[0]) == pytest.approx(0.0, abs=1e-12)
    assert parts["vec-a"].xy == (0.0, 2.0)
    plt.close(ax.figure)


def test_plot_vectors_2d_bad_input():
    with pytest.raises(ValueError, match="shape"):
        plotting.plot_vectors_2d([1, 2, 3], [1, 0])
    with pytest.raises(ValueError, match="zero vector"):
        plotting.plot_vectors_2d([0, 0], [1, 0])
    with pytest.raises(ValueError, match="NaN"):
        plotting.plot_vectors_2d([np.nan, 0], [1, 0])
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="plot_vectors_2d"):
        plotting.update_vectors_2d(ax, [1, 0], [0, 1])
    plt.close(fig)


def test_plot_score_grid():
    S = np.array([[5.0, -4.0, 0.0]])
    ax = plotting.plot_score_grid(S)
    assert [t.get_text() for t in ax.texts] == ["5.0", "-4.0", "0.0"]
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="2-D"):
        plotting.plot_score_grid([1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        plotting.plot_score_grid([[np.inf]])
    with pytest.raises(ValueError, match="one entry per row"):
        plotting.plot_score_grid([[1.0]], labels=["a", "b"])


# --- keys at chosen cosines (the key-length experiment) ---------------------------------------


def test_keys_at_cosines_have_the_asked_cosines_and_length():
    rng = np.random.default_rng(3)
    q = rng.standard_normal(16)
    cos_wanted = np.array([0.6, 0.4, 0.2, 0.1, -0.2, 1.0, -1.0, 0.0])
    K = keys_at_cosines(q, cos_wanted, 4.0, rng)
    assert K.shape == (8, 16)
    assert_allclose(np.linalg.norm(K, axis=1), 4.0, rtol=1e-13)
    assert_allclose([cosine(q, k) for k in K], cos_wanted, atol=1e-13)


def test_keys_at_cosines_turn_a_random_way():
    q = np.array([1.0, 0.0, 0.0])
    K = keys_at_cosines(q, [0.0, 0.0], 1.0, np.random.default_rng(0))
    assert abs(K[0] @ K[1]) < 0.999  # two different directions perpendicular to q


@pytest.mark.parametrize("q, cosines, length", [
    ([1.0], [0.5], 1.0),             # no room to turn off q
    ([0.0, 0.0], [0.5], 1.0),        # q has no direction
    ([1.0, 0.0], [1.5], 1.0),        # not a cosine
    ([1.0, 0.0], [0.5], 0.0),        # length must be positive
])
def test_keys_at_cosines_rejects_bad_input(q, cosines, length):
    with pytest.raises(ValueError):
        keys_at_cosines(q, cosines, length, np.random.default_rng(0))
