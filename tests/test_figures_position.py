"""The figures and controls of the chapter *Position* draw what they are given."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from lib.figures.position import (
    alibi_parts,
    plot_decay,
    plot_dot_products,
    plot_encodings,
    plot_four_terms,
    rotation_parts,
)
from lib.position import position_frequencies
from lib.widgets import Control


def test_opening_control_shows_negative_and_positive_offsets():
    control = Control(**rotation_parts(max_offset=9))
    offsets = control.params[0].values
    assert min(offsets) == -9 and max(offsets) == 9


def test_dot_product_curve_is_one_at_offset_zero():
    fig = plot_dot_products(widths=(64,), max_offset=5)
    x, y = fig.axes[0].lines[0].get_data()
    assert y[list(x).index(0)] == 1.0
    plt.close(fig)


def test_decay_curves_start_at_one_and_the_band_is_one_over_root_d_k():
    fig = plot_decay(64, max_offset=100, n_offsets=30)
    ax = fig.axes[0]
    same, bound = ax.lines[0].get_ydata(), ax.lines[1].get_ydata()
    assert abs(same[0] - np.cos(position_frequencies(64)).mean()) < 1e-15  # offset 1 comes first
    assert bound.max() <= 1.0 + 1e-12
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert math.isclose(band.max(), 1 / 8) and math.isclose(band.min(), -1 / 8)
    plt.close(fig)


def test_heat_maps_share_one_colour_scale():
    grids = [np.eye(3), 2 * np.eye(3), -np.eye(3), np.zeros((3, 3))]
    fig = plot_four_terms(grids, ["a", "b", "c", "d"])
    assert {im.get_clim() for ax in fig.axes[:4] for im in ax.images} == {(-2.0, 2.0)}
    plt.close(fig)
    fig = plot_encodings(np.zeros((5, 4)))
    assert fig.axes[0].images[0].get_clim() == (-1, 1)
    plt.close(fig)


def test_alibi_control_builds_with_its_slopes():
    control = Control(**alibi_parts(N=6, slopes=(0.0, 0.5)))
    assert tuple(control.params[0].values) == (0.0, 0.5)
