"""The figure helpers of *Expectation and Variance*: the numbers they compute match lib's."""

import matplotlib.pyplot as plt
import numpy as np

import lib
from lib.figures import expectation_variance as figs


def test_jacobian_norms_equal_the_frobenius_norm_of_lib_softmax_jacobian():
    rows = 3.0 * np.random.default_rng(0).standard_normal((50, 6))
    expected = [np.linalg.norm(lib.softmax_jacobian(z)) for z in rows]
    np.testing.assert_allclose(figs.jacobian_norms(lib.softmax(rows)), expected, rtol=1e-12)


def test_jacobian_norm_of_a_two_way_tie_is_one_half():
    assert abs(figs.jacobian_norms(np.array([[0.5, 0.5, 0.0, 0.0]]))[0] - 0.5) < 1e-15


def test_share_gives_the_binomial_standard_error():
    assert figs.share([True] * 3 + [False], digits=2) == "0.75 ± 0.217"


def test_training_table_counts_solved_and_stuck_rows():
    run = {"grad_norm": np.ones((2, 2)), "target": np.array([0, 0]),
           "weights": np.array([[0.95, 0.05], [0.05, 0.95]]),
           "start_weights": np.full((2, 2), 0.5)}
    line = figs.training_table({(16, False): run}).splitlines()[1].split()
    assert line[:2] == ["16", "none"] and line[-6:] == ["0.5", "±", "0.35", "0.5", "±", "0.35"]


def test_every_figure_draws_on_its_inputs():
    samples = {4: np.random.default_rng(1).standard_normal(500)}
    figs.plot_dot_histograms(samples)
    figs.plot_saturation(np.array([0.5, 2.0]), np.random.default_rng(2).standard_normal((20, 8)))
    figs.plot_sigmoid_slope(lib.sigmoid_slope)
    plt.close("all")
