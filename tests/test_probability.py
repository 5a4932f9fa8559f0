"""lib.probability against exact enumeration and closed forms with explicit tolerances."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np
import pytest

from lib.probability import (
    COMPONENT_DISTRIBUTIONS,
    covariance,
    expectation,
    fair_die,
    independent_pair,
    sample_components,
    simulate_dot_products,
    standard_error,
    variance,
    variance_standard_error,
)
from tests.conftest import chapter_cell

CHAPTER = "expectation-variance"

# -- exact enumeration ---------------------------------------------------------------------

def test_fair_die_is_uniform_on_one_to_six():
    faces, probs = fair_die()
    assert faces == [1, 2, 3, 4, 5, 6]
    assert probs == [Fraction(1, 6)] * 6


def test_die_moments_are_exact():
    faces, probs = fair_die()
    assert expectation(faces, probs) == Fraction(7, 2)
    assert expectation(faces, probs, lambda x: x**2) == Fraction(91, 6)
    assert variance(faces, probs) == Fraction(35, 12)
    assert round(float(variance(faces, probs)), 2) == 2.92
    assert round(float(variance(faces, probs)) ** 0.5, 2) == 1.71


def test_variance_matches_expanded_form_on_any_distribution():
    values = [-2, 0, 1, 5]
    probs = [Fraction(1, 10), Fraction(2, 5), Fraction(3, 10), Fraction(1, 5)]
    mu = expectation(values, probs)
    assert variance(values, probs) == expectation(values, probs, lambda x: x * x) - mu**2


def test_expectation_accepts_floats_that_sum_to_one():
    assert expectation([0.0, 1.0], [0.25, 0.75]) == pytest.approx(0.75)


@pytest.mark.parametrize("values, probs, message", [
    ([], [], "empty"),
    ([1, 2], [Fraction(1, 2)], "same length"),
    ([1, 2], [Fraction(3, 2), Fraction(-1, 2)], "non-negative"),
    ([1, 2], [Fraction(1, 2), Fraction(1, 3)], "sum to 1"),
    ([1, 2], [0.5, 0.4], "sum to 1"),
])
def test_expectation_and_variance_reject_bad_distributions(values, probs, message):
    for f in (expectation, variance):
        with pytest.raises(ValueError, match=message):
            f(values, probs)


def test_independent_pair_enumerates_the_product_distribution():
    pairs, probs = independent_pair(fair_die(), fair_die())
    assert pairs == list(product(range(1, 7), repeat=2))
    assert set(probs) == {Fraction(1, 36)} and sum(probs) == 1
    # Rule 2 holds exactly, and Rule 3 for the sum of two dice.
    assert expectation(pairs, probs, lambda xy: xy[0] * xy[1]) == Fraction(49, 4)
    assert variance([x + y for x, y in pairs], probs) == 2 * Fraction(35, 12)


def test_independent_pair_rejects_bad_input():
    with pytest.raises(ValueError, match="pair"):
        independent_pair([1, 2, 3], fair_die())
    with pytest.raises(ValueError, match="sum to 1"):
        independent_pair(([1, 2], [Fraction(1, 2), Fraction(1, 4)]), fair_die())


def test_covariance_is_zero_for_independent_and_var_for_identical():
    pairs, probs = independent_pair(fair_die(), fair_die())
    assert covariance(pairs, probs) == 0
    faces, p = fair_die()
    assert covariance([(x, x) for x in faces], p) == Fraction(35, 12)
    assert covariance([(x, 7 - x) for x in faces], p) == -Fraction(35, 12)


def test_covariance_rejects_non_pairs():
    with pytest.raises(ValueError, match="pairs"):
        covariance([1, 2], [Fraction(1, 2)] * 2)
    with pytest.raises(ValueError, match="pairs"):
        covariance([(1, 2, 3)], [1])


# -- sampling: closed forms with explicit tolerances ------------------------------------------

@pytest.mark.parametrize("dist", COMPONENT_DISTRIBUTIONS)
def test_components_have_mean_zero_and_variance_one(dist):
    n = 200_000
    x = sample_components(dist, n, np.random.default_rng(0))
    assert x.shape == (n,)
    # Standard errors: mean 1/√n; variance √((E[x⁴] − 1)/n) with E[x⁴] ≤ 3. Allow 5 of them.
    assert abs(x.mean()) < 5 / np.sqrt(n)
    assert abs(x.var() - 1) < 5 * np.sqrt(2 / n)


def test_component_shapes_have_the_right_support():
    rng = np.random.default_rng(1)
    assert set(sample_components("coin", 1000, rng)) == {-1.0, 1.0}
    u = sample_components("uniform", 1000, rng)
    assert u.min() >= -np.sqrt(3) and u.max() <= np.sqrt(3)
    assert sample_components("normal", (3, 4), rng).shape == (3, 4)


def test_sample_components_rejects_unknown_shape_and_missing_rng():
    with pytest.raises(ValueError, match="dist must be one of"):
        sample_components("cauchy", 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="Generator"):
        sample_components("normal", 3, rng=0)


@pytest.mark.parametrize("d_k", [4, 64, 512])
@pytest.mark.parametrize("dist", COMPONENT_DISTRIBUTIONS)
def test_dot_products_have_variance_d_k(d_k, dist):
    n = 20_000
    x = simulate_dot_products(d_k, n, np.random.default_rng(d_k), dist=dist)
    # q·k/√d_k has kurtosis at most 3 + 6/d_k (normal components), so the sample variance of the
    # scaled score has standard error at most √((2 + 6/d_k)/n); allow 5 standard errors.
    tol = 5 * np.sqrt((2 + 6 / d_k) / n)
    assert abs(x.var() / d_k - 1) < tol
    assert abs(x.mean() / np.sqrt(d_k)) < 5 / np.sqrt(n)
    scaled = simulate_dot_products(d_k, n, np.random.default_rng(d_k), dist=dist, scale=True)
    np.testing.assert_allclose(scaled, x / np.sqrt(d_k))


def test_coin_dot_products_match_exact_enumeration():
    # d_k = 3 coin components: 2^6 equally likely outcomes, enumerate q·k exactly.
    outcomes = [sum(a * b for a, b in zip(v[:3], v[3:], strict=True))
                for v in product((-1, 1), repeat=6)]
    probs = [Fraction(1, 64)] * 64
    assert expectation(outcomes, probs) == 0 and variance(outcomes, probs) == 3


@pytest.mark.parametrize("d_k, n", [(0, 10), (4, 0), (2.5, 10), (True, 10)])
def test_simulate_dot_products_rejects_bad_sizes(d_k, n):
    with pytest.raises(ValueError, match="positive integer"):
        simulate_dot_products(d_k, n, np.random.default_rng(0))


def test_simulate_dot_products_requires_a_generator():
    with pytest.raises(ValueError, match="Generator"):
        simulate_dot_products(4, 10, rng=None)


# -- the chapter derives the simulation in the open; lib's version agrees --------------------

def test_chapter_simulation_agrees_with_lib():
    ns = chapter_cell(CHAPTER, "derive-simulate-dot-products")
    for d_k, scale in ((4, False), (64, True), (512, False)):
        mine = ns["simulate_dot_products"](d_k, 500, np.random.default_rng(3), scale=scale)
        ours = simulate_dot_products(d_k, 500, np.random.default_rng(3), scale=scale)
        np.testing.assert_allclose(mine, ours, rtol=1e-12, atol=1e-12)


# -- the plot helper this chapter added -------------------------------------------------------

def test_plot_normal_density_draws_the_density():
    import matplotlib.pyplot as plt

    from lib.plotting import plot_normal_density

    ax = plot_normal_density(sigma=2.0, mu=1.0)
    x, y = ax.lines[0].get_data()
    assert x.min() == pytest.approx(-7.0) and x.max() == pytest.approx(9.0)
    assert np.trapezoid(y, x) == pytest.approx(1.0, abs=1e-3)  # ±4σ holds 99.99 %
    assert y.max() == pytest.approx(1 / (2.0 * np.sqrt(2 * np.pi)), rel=1e-4)
    plt.close(ax.figure)
    for bad in ({"sigma": 0.0}, {"sigma": -1.0}, {"sigma": np.nan}, {"mu": np.inf}):
        with pytest.raises(ValueError, match="sigma"):
            plot_normal_density(**bad)


# -- standard errors -----------------------------------------------------------------------------

def test_standard_error_is_the_spread_of_repeated_means():
    rng = np.random.default_rng(5)
    draws = rng.standard_normal((2000, 400))
    ses = np.array([standard_error(x) for x in draws[:50]])
    np.testing.assert_allclose(ses, 1 / np.sqrt(400), rtol=0.15)
    assert draws.mean(axis=1).std() == pytest.approx(1 / np.sqrt(400), rel=0.05)


def test_variance_standard_error_matches_the_normal_formula_and_the_spread():
    rng = np.random.default_rng(6)
    draws = rng.standard_normal((1000, 2000))
    assert variance_standard_error(draws[0]) == pytest.approx(np.sqrt(2 / 2000), rel=0.1)
    assert draws.var(axis=1).std() == pytest.approx(np.sqrt(2 / 2000), rel=0.06)
    coin = np.where(rng.random(1000) < 0.5, -1.0, 1.0)  # m_4 = m_2²: a variance with no spread
    assert variance_standard_error(coin) < 1e-3


@pytest.mark.parametrize("func", [standard_error, variance_standard_error])
@pytest.mark.parametrize("bad, message", [([1.0], "at least 2"), ([], "empty"),
                                          ([1.0, np.nan], "NaN"), ([[1.0, 2.0]], "1-D")])
def test_standard_errors_reject_bad_samples(func, bad, message):
    with pytest.raises(ValueError, match=message):
        func(bad)
