"""lib.figures.depth draws what it is given: one line per case, on the Axes it returns."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from lib.depth import stack_theory
from lib.figures.depth import HOOK_CASES, plot_funnel, plot_hook, plot_residual


def test_hook_draws_the_predicted_lines_and_the_simulated_dots():
    ax = plot_hook(np.random.default_rng(0), L=10, width=16, n_nets=2)
    assert len(ax.lines) == 2 * len(HOOK_CASES)
    for line, (init, act, gain) in zip(ax.lines[::2], HOOK_CASES.values(), strict=True):
        q, _ = stack_theory([16] * 11, init, act, gain)
        assert np.allclose(line.get_ydata(), q)
    assert ax.get_yscale() == "log"
    plt.close(ax.figure)


def test_hook_is_reproducible_from_its_seed():
    a = plot_hook(np.random.default_rng(3), L=5, width=8, n_nets=2)
    b = plot_hook(np.random.default_rng(3), L=5, width=8, n_nets=2)
    for la, lb in zip(a.lines, b.lines, strict=True):
        assert np.array_equal(la.get_ydata(), lb.get_ydata())
    plt.close(a.figure)
    plt.close(b.figure)


def test_funnel_draws_exact_and_simulated_on_both_panels():
    runs = {"fan_in": (np.ones(5), np.linspace(0.1, 1, 5), np.ones(5), np.linspace(0.1, 1, 5)),
            "glorot": (np.arange(1, 6.0), np.ones(5), np.arange(1, 6.0), np.ones(5))}
    ax_q, ax_r = plot_funnel(runs)
    assert len(ax_q.lines) == len(ax_r.lines) == 4
    assert np.allclose(ax_q.lines[2].get_ydata(), np.arange(1, 6.0))
    assert np.allclose(ax_r.lines[0].get_ydata(), np.linspace(0.1, 1, 5))
    plt.close(ax_q.figure)


def test_residual_plots_the_average_over_networks_and_the_linear_law():
    ms = np.array([[1.0, 2.0, 3.0], [1.0, 4.0, 5.0]])
    ax = plot_residual({"pre-LN": ms}, 0.5)
    assert np.allclose(ax.lines[0].get_ydata(), [1.0, 3.0, 4.0])
    assert np.allclose(ax.lines[1].get_ydata(), [1.0, 1.5, 2.0])
    plt.close(ax.figure)
