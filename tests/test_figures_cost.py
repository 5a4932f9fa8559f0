"""lib.figures.cost draws what it is given: the right lines, on the right scales, with labels."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgba

from lib.cost import MODELS, pairwise_share
from lib.figures.cost import (
    PALETTE,
    blocks,
    decode,
    log_axes,
    measured,
    memory,
    panels,
    plain,
    qk_timing,
    roofline,
    share,
    window_errors,
)
from lib.measure import loglog_slope
from lib.plotting import COLORS


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plain_labels_powers_of_ten_outside_the_readable_range():
    assert plain(1e10) == "10¹⁰" and plain(1e-5) == "10⁻⁵"
    assert plain(0.05) == "0.05" and plain(512) == "512" and plain(2e5) == "200000"


def test_log_axes_sets_the_bases_and_leaves_none_linear():
    fig, ax = plt.subplots()
    assert log_axes(ax, x_base=2, y_base=None) is ax
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    assert ax.xaxis.get_transform().base == 2
    assert ax.xaxis.get_major_formatter()(1024, 0) == "1024"
    _, ax = plt.subplots()
    log_axes(ax)
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_share_draws_every_model_with_its_context_dot_and_the_crossovers():
    ax = share().axes[0]
    curves, dots, crossovers = ax.lines[0:10:2], ax.lines[1:10:2], ax.lines[10:]
    assert [c.get_label() for c in curves] == list(MODELS)
    for curve, dot, (d, h, _layers, context) in zip(curves, dots, MODELS.values(), strict=True):
        ratio, y = curve.get_data()
        np.testing.assert_allclose(y, pairwise_share(ratio * d, d, h))
        assert dot.get_xdata()[0] == context / d
        assert dot.get_ydata()[0] == pytest.approx(pairwise_share(context, d, h))
    assert [line.get_xdata()[0] for line in crossovers] == pytest.approx(
        [2 / (1 + 5 / 256), 6 / (1 + 5 / 256)])
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"


def test_measured_draws_times_in_ms_and_memory_in_mb_with_slopes():
    sizes = [64, 128, 256, 512]
    times = {"scores": [1e-4, 4e-4, 1.6e-3, 6.4e-3], "softmax": [1e-5, 2e-5, 4e-5, 8e-5]}
    peaks, counted = [1e6, 4e6, 1.6e7, 6.4e7], [1e6, 4e6, 1.6e7, 6.4e7]
    ax_t, ax_m = measured(sizes, times, peaks, counted).axes
    assert len(ax_t.lines) == len(times)
    np.testing.assert_allclose(ax_t.lines[0].get_ydata(), 1e3 * np.array(times["scores"]))
    slope = loglog_slope(sizes[1:], times["softmax"][1:])
    assert ax_t.lines[1].get_label() == f"softmax (slope {slope:.1f})"
    np.testing.assert_allclose(ax_m.lines[1].get_ydata(), np.array(peaks) / 1e6)
    assert ax_m.lines[1].get_label() == "measured (slope 2.00)"
    assert ax_t.get_ylabel() == "best time (ms)" and ax_m.get_ylabel() == "peak memory (MB)"


def test_roofline_is_the_minimum_of_peak_and_bandwidth_and_dots_are_filled_or_not():
    peak, bandwidth = 100.0, 10.0
    dots = [("scores", 16.0, 80.0, True), ("softmax", 0.5, 3.0, False)]
    ax = roofline(peak, bandwidth, 20.0, dots).axes[0]
    x, roof = ax.lines[0].get_data()
    np.testing.assert_allclose(roof, np.minimum(peak, x * bandwidth))
    assert ax.lines[2].get_xdata()[0] == peak / bandwidth          # the ridge point
    filled, hollow = ax.lines[3], ax.lines[4]
    assert (filled.get_xdata()[0], filled.get_ydata()[0]) == (16.0, 80.0)
    assert filled.get_markerfacecolor() == filled.get_color()
    assert hollow.get_markerfacecolor() == "none"


def test_panels_title_each_block_with_the_online_recursion():
    scores = np.array([0.5, 1.2, -0.3, 0.8, 2.1, 0.0, 1.5, -1.0])
    fig = panels(scores, 4)
    assert len(fig.axes) == 2
    ell_1 = np.exp(scores[:4] - 1.2).sum()
    alpha = math.exp(1.2 - 2.1)
    ell_2 = alpha * ell_1 + np.exp(scores[4:] - 2.1).sum()
    assert fig.axes[0].get_title() == rf"$\alpha = 0.000$, $\ell = {ell_1:.3f}$"
    assert fig.axes[1].get_title() == rf"$\alpha = {alpha:.3f}$, $\ell = {ell_2:.3f}$"
    assert [len(ax.patches) for ax in fig.axes] == [4, 8]          # the bars seen so far
    assert len(fig.axes[0].lines) == 1 and len(fig.axes[1].lines) == 2  # the maxima


def test_memory_draws_counts_and_measurements_of_both_methods_in_mb():
    sizes = [64, 128, 256]
    counts = {"straightforward": [1e6, 4e6, 1.6e7], "tiled": [2e6, 3e6, 5e6]}
    measured_bytes = {"straightforward": [1.1e6, 4.1e6, 1.61e7], "tiled": [2.1e6, 3.1e6, 5.1e6]}
    ax = memory(sizes, counts, measured_bytes, [9e5, 1e6, 1e6], 100.0).axes[0]
    assert [ax.lines[i].get_label() for i in (0, 2)] == ["straightforward, count", "tiled, count"]
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [1.1, 4.1, 16.1])
    np.testing.assert_allclose(ax.lines[4].get_data(), [sizes[1:], [1.0, 1.0]])
    assert ax.lines[-1].get_xdata()[0] == 100.0                    # the crossover
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2


def test_blocks_shade_full_masked_and_skipped_blocks():
    kinds = np.array([[1, 0, 0], [2, 1, 0], [2, 2, 1]])
    ax = blocks(10, 4, kinds).axes[0]
    assert len(ax.patches) == kinds.size
    colors = [patch.get_facecolor() for patch in ax.patches]
    shade = {0: "white", 1: COLORS["sky"], 2: COLORS["blue"]}
    expected = [shade[k] for k in kinds.ravel()]
    assert all(np.allclose(c, to_rgba(e))
               for c, e in zip(colors, expected, strict=True))
    assert ax.patches[-1].get_width() == 2                          # the last block is short
    assert ax.get_ylim() == (10, 0)                                 # query 0 at the top


def test_decode_totals_are_the_sums_of_the_per_token_counts():
    d, h = 64, 4
    ax = decode(d, h).axes[0]
    T, cached = ax.lines[0].get_data()
    _, uncached = ax.lines[1].get_data()
    c = 4 * d + 5 * h
    assert T[0] == 1 and T[-1] == 2**17
    assert cached[0] == uncached[0] == 24 * d * d + c
    np.testing.assert_allclose(cached, 24 * d * d * T + c * T * (T + 1) / 2)
    assert np.all(uncached[1:] > cached[1:])


def test_qk_timing_guides_pass_through_the_third_point_with_slopes_2_and_1():
    t_N = {64: 1e-4, 128: 3e-4, 256: 1e-3, 512: 4e-3}
    t_d = {16: 1e-4, 32: 2e-4, 64: 5e-4}
    for ax, times, slope in zip(qk_timing(t_N, t_d).axes, (t_N, t_d), (2, 1), strict=True):
        x, guide = ax.lines[1].get_data()
        y = 1e3 * np.array(list(times.values()))
        np.testing.assert_allclose(ax.lines[0].get_ydata(), y)
        assert guide[2] == pytest.approx(y[2])
        assert loglog_slope(x, guide) == pytest.approx(slope)


def test_window_errors_plot_mean_and_standard_error_without_the_last_window():
    windows = np.array([1, 2, 4, 8])
    err = np.array([[0.4, 0.2, 0.1, 0.0], [0.6, 0.4, 0.1, 0.0], [0.5, 0.3, 0.1, 0.0]])
    ax = window_errors(windows, {"random": err, "repeated": err / 2}, 3).axes[0]
    assert len(ax.containers) == 2
    line, _caps, (bars,) = ax.containers[0]
    np.testing.assert_allclose(line.get_data(), [[1, 2, 4], [0.5, 0.3, 0.1]])
    se = err.std(axis=0, ddof=1)[:-1] / math.sqrt(3)
    np.testing.assert_allclose([seg[1, 1] - seg[0, 1] for seg in bars.get_segments()], 2 * se,
                               atol=1e-15)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["random inputs",
                                                                   "repeated inputs"]


def test_palette_is_five_distinct_house_colours():
    assert len(set(PALETTE)) == 5 and set(PALETTE) <= set(COLORS.values())
