"""Figures of "The quadratic cost of attention" ({ref}`sec-cost`): drawing code only.

The numbers they draw are computed in the chapter's visible cells or by :mod:`lib.cost`;
each function takes them, draws one figure and returns its Figure.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from lib.cost import MODELS, pairwise_share
from lib.measure import loglog_slope
from lib.plotting import COLORS

__all__ = ["log_axes", "PALETTE", "share", "measured", "roofline", "panels", "memory",
           "blocks", "decode", "qk_timing", "window_errors"]

SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
PALETTE = [COLORS[c] for c in ("blue", "orange", "green", "vermillion", "purple")]


def plain(value, _pos=None):
    """A tick label as plain text, 0.05, 512 or 10¹⁰: TeX labels are slow to draw.

    >>> plain(0.05), plain(512), plain(1e10)
    ('0.05', '512', '10¹⁰')
    """
    power = math.log10(value)
    if not 1e-3 <= value < 1e4 and abs(power - round(power)) < 1e-9:
        return "10" + str(round(power)).translate(SUPERSCRIPTS)
    return f"{value:g}"


def _minor_label(value, axis):
    low, high = sorted(axis.get_view_interval())
    return plain(value) if high < 10 * low and f"{value:e}"[0] in "25" else ""


def log_axes(ax, x_base=10, y_base=10):
    """Logarithmic x and y axes (base None: left linear), labelled in plain text.

    >>> fig, ax = plt.subplots()
    >>> log_axes(ax, x_base=2, y_base=None) is ax
    True
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'linear')
    >>> plt.close(fig)
    """
    for set_scale, axis, base in ((ax.set_xscale, ax.xaxis, x_base),
                                  (ax.set_yscale, ax.yaxis, y_base)):
        if base is not None:
            set_scale("log", base=base)
            axis.set_major_formatter(plain)
            axis.set_minor_formatter(lambda value, _pos, axis=axis: _minor_label(value, axis))
    return ax


def share():
    """The pairwise share of the FLOPs against N/d for every model, with the two crossovers.

    >>> fig = share()
    >>> len(fig.axes[0].lines)        # a curve and a dot per model, and the two crossovers
    12
    >>> plt.close(fig)
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ratio = np.geomspace(0.01, 100, 200)
    for (name, (d, h, _layers, context)), color in zip(MODELS.items(), PALETTE,
                                                       strict=True):
        ax.plot(ratio, pairwise_share(ratio * d, d, h), color=color, lw=1.2, label=name)
        ax.plot(context / d, pairwise_share(context, d, h), "o", color=color)
    ax.axvline(2 / (1 + 5 / 256), color="black", ls=":", lw=1)
    ax.axvline(6 / (1 + 5 / 256), color="black", ls="--", lw=1)
    log_axes(ax, y_base=None)
    ax.set_xlabel(r"sequence length in model widths, $N/d$")
    ax.set_ylabel("pairwise share of the FLOPs")
    ax.legend(loc="upper left")
    return fig


def measured(sizes, times, memory, counted):
    """Times of the steps of one head (left) and its peak memory on the count (right).

    >>> sizes, counted = [64, 128, 256], [1e6, 4e6, 1.6e7]
    >>> fig = measured(sizes, {"scores": [1e-4, 4e-4, 1.6e-3]}, counted, counted)
    >>> [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
    ['scores (slope 2.0)', 'count', 'measured (slope 2.00)']
    >>> plt.close(fig)
    """
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(8.4, 3.4))
    for (name, t), color in zip(times.items(), PALETTE, strict=False):
        ax_t.plot(sizes, 1e3 * np.array(t), "o-", color=color, ms=4,
                  label=f"{name} (slope {loglog_slope(sizes[1:], t[1:]):.1f})")
    ax_t.set_ylabel("best time (ms)")
    ax_m.plot(sizes, np.array(counted) / 1e6, "-", color="black", lw=1, label="count")
    ax_m.plot(sizes, np.array(memory) / 1e6, "o", color=COLORS["vermillion"],
              label=f"measured (slope {loglog_slope(sizes[1:], memory[1:]):.2f})")
    ax_m.set_ylabel("peak memory (MB)")
    for ax in (ax_t, ax_m):
        log_axes(ax, x_base=2)
        ax.set_xlabel(r"sequence length $N$")
        ax.legend()
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.96, wspace=0.28)
    return fig


def roofline(peak, bandwidth, softmax_ceiling, dots):
    """The roofline of one core; ``dots``: (label, intensity, GFLOP/s, filled) per point.

    >>> fig = roofline(100.0, 10.0, 20.0, [("scores", 16.0, 80.0, True)])
    >>> len(fig.axes[0].lines)        # two roofs, the ridge point's line and one dot
    4
    >>> plt.close(fig)
    """
    x = np.geomspace(0.05, 200, 200)
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    ax.plot(x, np.minimum(peak, x * bandwidth), color="black", lw=1.5,
            label=r"$\min(P, I B)$")
    ax.plot(x, np.minimum(softmax_ceiling, x * bandwidth), "--", color=COLORS["vermillion"],
            lw=1.2, label="softmax in cache")
    ax.axvline(peak / bandwidth, color="grey", ls=":", lw=1)
    ax.annotate(r"ridge $P/B$", (peak / bandwidth, peak), xytext=(4, -14),
                textcoords="offset points", fontsize=8)
    for (label, intensity, rate, filled), color in zip(dots, PALETTE, strict=False):
        ax.plot(intensity, rate, "o", ms=7, color=color, mfc=color if filled else "none",
                label=label)
    log_axes(ax)
    ax.set_xlabel(r"arithmetic intensity $I$ (FLOP per byte)")
    ax.set_ylabel("attainable GFLOP/s")
    ax.legend(loc="center right", fontsize=8)
    return fig


def panels(scores, block):
    """The online softmax over blocks of ``scores``: one panel per block.

    >>> fig = panels(np.array([0.0, 1.0, 2.0, 0.0]), 2)
    >>> print(*(ax.get_title() for ax in fig.axes), sep="; ")
    $\\alpha = 0.000$, $\\ell = 1.368$; $\\alpha = 0.368$, $\\ell = 1.639$
    >>> plt.close(fig)
    """
    n_blocks = len(scores) // block
    fig, axes = plt.subplots(1, n_blocks, figsize=(8.4, 2.8), sharey=True)
    m, ell = -math.inf, 0.0
    for step, ax in enumerate(axes):
        part = scores[step * block:(step + 1) * block]
        m_new = max(m, float(part.max()))
        alpha = math.exp(m - m_new)
        ell = alpha * ell + float(np.exp(part - m_new).sum())
        seen = np.arange((step + 1) * block)
        colors = ["0.75"] * (step * block) + [PALETTE[step % len(PALETTE)]] * block
        ax.bar(seen, scores[:len(seen)], color=colors)
        if step:
            ax.axhline(m, color="black", ls="--", lw=1)
        ax.axhline(m_new, color="black", lw=1)
        ax.set_title(rf"$\alpha = {alpha:.3f}$, $\ell = {ell:.3f}$", fontsize=9)
        ax.set_xlabel(r"key $j$")
        m = m_new
    axes[0].set_ylabel(r"score $z_j$")
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.2, top=0.88, wspace=0.12)
    return fig


def memory(sizes, counts, measured_bytes, working_set, crossover):
    """Peak memory of both methods, counted (lines) and measured (dots), and the working set.

    >>> counts = {"straightforward": [1e6, 4e6, 1.6e7], "tiled": [2e6, 3e6, 5e6]}
    >>> fig = memory([64, 128, 256], counts, counts, [1e6, 1e6, 1e6], 100)
    >>> fig.axes[0].get_ylabel()
    'peak memory (MB)'
    >>> plt.close(fig)
    """
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    for (method, count), color in zip(counts.items(), (COLORS["vermillion"], COLORS["blue"]),
                                  strict=True):
        ax.plot(sizes, np.array(count) / 1e6, "-", color=color, label=f"{method}, count")
        ax.plot(sizes, np.array(measured_bytes[method]) / 1e6, "o", color=color, ms=4)
    ax.plot(sizes[1:], np.array(working_set[1:]) / 1e6, ":", color=COLORS["blue"],
            label="tiled working set")
    ax.plot([], [], "o", color="grey", ms=4, label="measured (tracemalloc)")
    ax.axvline(crossover, color="black", lw=1, ls="--")
    log_axes(ax, x_base=2)
    ax.set_xlabel(r"sequence length $N$")
    ax.set_ylabel("peak memory (MB)")
    ax.legend()
    return fig


def blocks(n, b, kinds):
    """The blocks of a causal tiled pass: 2 full, 1 masked inside, 0 skipped.

    >>> fig = blocks(4, 2, np.array([[1, 0], [2, 1]]))
    >>> len(fig.axes[0].patches)      # one rectangle per block
    4
    >>> plt.close(fig)
    """
    fig, ax = plt.subplots(figsize=(3.6, 3.6))
    edges = list(range(0, n, b)) + [n]
    shade = {0: "white", 1: COLORS["sky"], 2: COLORS["blue"]}
    for r in range(len(edges) - 1):
        for c in range(len(edges) - 1):
            ax.add_patch(plt.Rectangle((edges[c], edges[r]), edges[c + 1] - edges[c],
                                       edges[r + 1] - edges[r], facecolor=shade[kinds[r, c]],
                                       edgecolor="grey", lw=0.5))
    ax.plot([0, n], [0, n], color="black", lw=1)
    ax.set_xlim(0, n)
    ax.set_ylim(n, 0)
    ax.set_aspect("equal")
    ax.grid(False)
    ax.set_xlabel(r"key $j$")
    ax.set_ylabel(r"query $i$")
    return fig


def decode(d, h):
    """Work of one layer to generate T tokens, with and without a KV cache.

    >>> fig = decode(64, 1)
    >>> [line.get_label() for line in fig.axes[0].lines]
    ['with a KV cache', 'without a cache']
    >>> plt.close(fig)
    """
    c = 4 * d + 5 * h
    T = np.unique(np.geomspace(1, 2**17, 120).astype(int)).astype(float)
    cached = 24 * d**2 * T + c * T * (T + 1) / 2
    uncached = 12 * d**2 * T * (T + 1) + c * T * (T + 1) * (T + 2) / 6
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    ax.plot(T, cached, color=COLORS["blue"], label="with a KV cache")
    ax.plot(T, uncached, color=COLORS["vermillion"], label="without a cache")
    log_axes(ax, x_base=2)
    ax.set_xlabel(r"tokens generated, $T$")
    ax.set_ylabel("FLOPs of one layer")
    ax.legend()
    return fig


def qk_timing(t_N, t_d):
    """Times of Q Kᵀ against N (left) and d_k (right), with slope-2 and slope-1 guides.

    ``t_N`` and ``t_d`` map a size to a time in seconds (three sizes or more: the guides pass
    through the third point).

    >>> times = {64: 1e-4, 128: 2e-4, 256: 4e-4}
    >>> fig = qk_timing(times, times)
    >>> [ax.get_legend().get_texts()[1].get_text() for ax in fig.axes]
    ['slope 2', 'slope 1']
    >>> plt.close(fig)
    """
    fig, (ax_n, ax_d) = plt.subplots(1, 2, figsize=(8.0, 3.2))
    for ax, times_s, slope, xlabel in ((ax_n, t_N, 2, r"sequence length $N$"),
                                       (ax_d, t_d, 1, r"head width $d_k$")):
        x = np.array(list(times_s), dtype=float)
        y = 1e3 * np.array(list(times_s.values()))
        ax.plot(x, y, "o-", color=COLORS["blue"], label="measured")
        ax.plot(x, y[2] * (x / x[2]) ** slope, "--", color="black", lw=1,
                label=f"slope {slope}")
        log_axes(ax, x_base=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(r"time of $QK^\top$ (ms)")
        ax.legend()
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.19, top=0.95, wspace=0.3)
    return fig


def window_errors(windows, errors, draws):
    """Relative error of the window against exact causal attention, mean ± standard error.

    ``errors`` maps each of two kinds of input to an array ``(draws, len(windows))``; the last
    window (the whole sequence, error 0) is left out.

    >>> err = np.ones((3, 4))
    >>> fig = window_errors(np.array([1, 2, 4, 8]), {"random": err, "repeated": err}, 3)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['random inputs', 'repeated inputs']
    >>> plt.close(fig)
    """
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    for (kind, err), color in zip(errors.items(), (COLORS["vermillion"], COLORS["blue"]),
                                strict=True):
        mean = err.mean(axis=0)[:-1]
        se = err.std(axis=0, ddof=1)[:-1] / math.sqrt(draws)
        ax.errorbar(windows[:-1], mean, yerr=se, fmt="o-", color=color, ms=4, capsize=3,
                    label=f"{kind} inputs")
    log_axes(ax, x_base=2)
    ax.set_xlabel(r"window size $w$")
    ax.set_ylabel("relative error of the output")
    ax.legend()
    return fig
