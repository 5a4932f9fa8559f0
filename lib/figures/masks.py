"""Figures of the chapter "Attention masks": the drawing code its hidden cells call.

Each function takes the numbers the chapter computed, draws them in the house style, and
returns the figure; nothing here computes a result the prose discusses.

* :func:`draw_mask_patterns`: boolean masks side by side, allowed pairs dark;
* :func:`draw_jacobians`: softmax Jacobians on one diverging colour scale;
* :func:`draw_weight_maps`: attention weights with the masked pairs light grey;
* :func:`draw_position_stats`: the statistics of causal row t, with error bars.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from lib.plotting import COLORS

__all__ = ["MASKED_COLOR", "draw_jacobians", "draw_mask_patterns", "draw_position_stats",
           "draw_weight_maps"]

#: Masked pairs are drawn light grey in every heat map of the chapter.
MASKED_COLOR = "0.85"


def draw_mask_patterns(patterns: dict, figsize=(9, 2.6)):
    """One grid per named boolean mask: allowed pairs dark, masked pairs light.

    >>> fig = draw_mask_patterns({"causal": np.tri(3, dtype=bool)})
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    fig, axes = plt.subplots(1, len(patterns), figsize=figsize, squeeze=False)
    for ax, (name, M) in zip(axes[0], patterns.items(), strict=True):
        ax.imshow(M, cmap="Greys", vmin=-0.4, vmax=1.2, interpolation="nearest")
        ax.set(xticks=[], yticks=[], xlabel=r"key $j$", ylabel=r"query $i$")
        ax.grid(False)
        ax.set_title(name, fontsize=10)
    fig.tight_layout()
    return fig


def draw_jacobians(jacobians: dict, figsize=(7.2, 3.3)):
    """Square matrices (named) on one symmetric diverging scale, indices counted from 1.

    >>> fig = draw_jacobians({"a": np.eye(2), "b": -np.eye(2)})
    >>> len(fig.axes)  # two maps and a colour bar
    3
    >>> plt.close(fig)
    """
    lim = max(np.abs(J).max() for J in jacobians.values())
    fig, axes = plt.subplots(1, len(jacobians), figsize=figsize, squeeze=False)
    for ax, (title, J) in zip(axes[0], jacobians.items(), strict=True):
        n = len(J)
        im = ax.imshow(J, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
        ax.set(xticks=range(n), xticklabels=range(1, n + 1), yticks=range(n),
               yticklabels=range(1, n + 1), xlabel=r"score $j$", ylabel=r"weight $i$")
        ax.set_title(title, fontsize=10)
        ax.grid(False)
    fig.colorbar(im, ax=list(axes[0]), label=r"$\partial p_i / \partial s_j$", shrink=0.9)
    return fig


def draw_weight_maps(weights_and_masks: dict, figsize=(9, 3)):
    """Heat maps of attention weights (named pairs ``(P, M)``), masked pairs light grey.

    >>> P, M = np.full((2, 2), 0.5), np.ones((2, 2), dtype=bool)
    >>> fig = draw_weight_maps({"x": (P, M)})
    >>> plt.close(fig)
    """
    cmap = plt.get_cmap("viridis").with_extremes(bad=MASKED_COLOR)
    fig, axes = plt.subplots(1, len(weights_and_masks), figsize=figsize, squeeze=False)
    for ax, (title, (P, M)) in zip(axes[0], weights_and_masks.items(), strict=True):
        im = ax.imshow(np.where(M, P, np.nan), cmap=cmap, vmin=0, vmax=1,
                       interpolation="nearest")
        ax.set(xticks=[], yticks=[], xlabel=r"key $j$", ylabel=r"query $i$")
        ax.set_title(title, fontsize=10)
        ax.grid(False)
    fig.colorbar(im, ax=list(axes[0]), label="weight", shrink=0.9)
    return fig


def draw_position_stats(T, stats: dict, figsize=(9.6, 3.2)):
    """The largest weight, the entropy and t·Var(o_t) of causal row t, with two standard errors.

    ``stats[key]`` is a list of ``(mean, standard error)`` over ``T`` for the keys ``"top"``,
    ``"entropy"`` and ``"t_var"``; the guides are the uniform row and the large-t limits.

    >>> T = (1, 2)
    >>> stats = {k: [(1.0, 0.1), (0.5, 0.1)] for k in ("top", "entropy", "t_var")}
    >>> fig = draw_position_stats(T, stats)
    >>> plt.close(fig)
    """
    t = np.array(T, dtype=float)
    log_t = np.log(t)
    guides = {"top": [(1 / t, "uniform 1/t", "--")],
              "entropy": [(log_t, "log t", "--"), (log_t - 0.5, "log t − 1/2", ":")],
              "t_var": [(np.ones_like(t), "uniform: 1", "--"),
                        (np.full_like(t, math.e), "limit e", ":")]}
    labels = {"top": "largest weight", "entropy": "entropy (nats)",
              "t_var": r"$t \cdot \operatorname{Var}(o_t)$"}
    fig, axes = plt.subplots(1, 3, figsize=figsize)
    for ax, key in zip(axes, labels, strict=True):
        mean, se = np.array(stats[key]).T
        ax.errorbar(t, mean, yerr=2 * se, fmt="o-", ms=4, color=COLORS["blue"],
                    label="simulated")
        for y, label, ls in guides[key]:
            ax.plot(t, y, ls=ls, color=COLORS["black"], lw=1, label=label)
        ax.set(xscale="log", xlabel=r"position $t$ (number of keys)", ylabel=labels[key])
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
