"""lib.figures.masks draws what it is given: one panel per mask, matrix or statistic."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from lib.figures.masks import (
    draw_jacobians,
    draw_mask_patterns,
    draw_position_stats,
    draw_weight_maps,
)


def test_one_panel_per_mask_showing_the_mask():
    masks = {"causal": np.tri(4, dtype=bool), "all": np.ones((4, 4), dtype=bool)}
    fig = draw_mask_patterns(masks)
    try:
        assert [ax.get_title() for ax in fig.axes] == list(masks)
        for ax, M in zip(fig.axes, masks.values(), strict=True):
            np.testing.assert_array_equal(ax.images[0].get_array(), M)
    finally:
        plt.close(fig)


def test_jacobians_share_one_symmetric_scale():
    fig = draw_jacobians({"a": np.diag([0.2, -0.1]), "b": np.diag([0.05, 0.0])})
    try:
        limits = {ax.images[0].get_clim() for ax in fig.axes if ax.images}
        assert limits == {(-0.2, 0.2)}
    finally:
        plt.close(fig)


def test_weight_maps_leave_masked_pairs_blank():
    P = np.array([[1.0, 0.0], [0.5, 0.5]])
    M = np.array([[True, False], [True, True]])
    fig = draw_weight_maps({"x": (P, M)})
    try:
        shown = np.ma.filled(fig.axes[0].images[0].get_array(), np.nan)
        assert np.isnan(shown[0, 1]) and shown[1, 0] == 0.5
    finally:
        plt.close(fig)


def test_position_stats_draw_three_panels_with_error_bars():
    ts = (1, 2, 4)
    stats = {k: [(1.0, 0.1), (0.8, 0.1), (0.6, 0.1)] for k in ("top", "entropy", "t_var")}
    fig = draw_position_stats(ts, stats)
    try:
        assert len(fig.axes) == 3
        assert all(ax.get_xscale() == "log" for ax in fig.axes)
    finally:
        plt.close(fig)
