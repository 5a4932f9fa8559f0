"""The figures of *The Geometry of Dot Products* draw what they are given."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from lib.figures.dot_products import (
    plot_cosine_panels,
    plot_hook,
    plot_packing,
    plot_worked,
)


def test_hook_draws_one_shadow_bar_per_key():
    keys = {"cat": np.array([3.0, 2.0]), "mat": np.array([-2.0, 3.0]),
            "sat": np.array([0.0, -3.0])}
    ax = plot_hook(np.array([2.0, 0.0]), keys, [6.0, -4.0, 0.0])
    bars = [line for line in ax.lines if line.get_linewidth() == 5]
    assert [tuple(b.get_xdata()) for b in bars] == [(0, 3.0), (0, -2.0), (0, 0.0)]
    plt.close("all")


def test_worked_labels_the_weights_with_their_values():
    _, ax_w = plot_worked(np.array([5.0, -4.0, 0.0]), np.array([0.993, 0.000123, 0.00669]))
    assert [t.get_text() for t in ax_w.texts] == ["0.993", "0.000123", "0.00669"]
    plt.close("all")


def test_cosine_panels_one_per_dimension():
    rng = np.random.default_rng(0)
    axes = plot_cosine_panels({d: rng.uniform(-1, 1, 50) for d in (2, 10, 100)})
    assert [ax.get_xlabel() for ax in axes] == [rf"$\cos\theta$, $d = {d}$" for d in (2, 10, 100)]
    plt.close("all")


def test_packing_plots_the_greedy_counts():
    ax = plot_packing({8: 8, 16: 19}, 0.3)
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert dots[0].get_ydata().tolist() == [8, 19]
    plt.close("all")
