"""Figures of the chapter *The Geometry of Dot Products*.

The chapter's visible cells compute the scores, cosines and packings; its hidden cells call
these functions to draw them (the hook, the worked example, the histograms of cosines and the
packing counts). Each function takes what the chapter computed and returns the Axes it drew on.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from lib.plotting import COLORS, plot_weights
from lib.vectors import cosine_pdf, norm, packing_lower_bound, scalar_projection

__all__ = ["plot_cosine_panels", "plot_hook", "plot_packing", "plot_worked"]


def plot_hook(q, keys, scores, ax=None):
    """The query, the keys and each key's shadow on the line of the query (a bar below it).

    ``q`` lies along the first axis; ``keys`` maps a word to its 2-D key, ``scores`` are the
    keys' scores in the same order.

    >>> ax = plot_hook(np.array([2.0, 0.0]), {"cat": np.array([3.0, 2.0])}, [6.0])
    >>> ax.get_xlabel()
    '$x_1$: animate (+) or inanimate (−)'
    >>> plt.close("all")
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(5.6, 4.4))
    ax.axhline(0, color="0.6", lw=0.8)  # the line of the query
    colors = [COLORS["blue"], COLORS["vermillion"], COLORS["orange"]]
    rows = zip(keys.items(), scores, (-0.45, -0.8, -1.15), colors, strict=False)
    for (word, k), s, y, color in rows:
        ax.annotate("", xy=tuple(k), xytext=(0, 0), arrowprops=dict(
            arrowstyle="-|>", color=color, lw=2, shrinkA=0, shrinkB=0))
        ax.text(*(k + 0.35 * k / norm(k)), word, color=color, ha="center", va="center")
        foot = scalar_projection(k, q)  # along the horizontal axis here
        ax.plot([k[0], foot], [k[1], 0], color="0.4", lw=1, ls="--")
        ax.plot([0, foot], [y, y], color=color, lw=5, solid_capstyle="butt")
        ax.text(3.4, y, f"{word}: score {s:+.0f}", color=color, va="center", fontsize=10)
    ax.annotate("", xy=tuple(q), xytext=(0, 0), arrowprops=dict(
        arrowstyle="-|>", color=COLORS["black"], lw=3, shrinkA=0, shrinkB=0))
    ax.text(1.0, 0.3, r"$q$ (“it”)", ha="center")
    ax.set_xlim(-3.2, 6.2)
    ax.set_ylim(-3.6, 3.6)
    ax.set_aspect("equal")
    ax.set_xlabel(r"$x_1$: animate (+) or inanimate (−)")
    ax.set_ylabel(r"$x_2$: thing (+) or action (−)")
    return ax


def plot_worked(scores, weights):
    """Two panels: the raw scores of the keys, and their weights labelled with their values.

    >>> ax_s, ax_w = plot_worked(np.array([5.0, -4.0, 0.0]), np.array([0.99, 0.0, 0.01]))
    >>> print(ax_s.get_ylabel())
    score $q \\cdot k$
    >>> plt.close("all")
    """
    fig, (ax_s, ax_w) = plt.subplots(1, 2, figsize=(7.0, 3.0))
    names = [f"$k_{{{j + 1}}}$" for j in range(len(scores))]
    bars = ax_s.bar(names, scores, color=[COLORS["blue"], COLORS["vermillion"], "0.6"])
    ax_s.bar_label(bars, fmt="%g", padding=2)
    ax_s.axhline(0, color="black", lw=0.8)
    ax_s.set_ylim(-5.5, 6.5)
    ax_s.set_ylabel(r"score $q \cdot k$")
    plot_weights(weights, ax=ax_w)
    ax_w.bar_label(ax_w.containers[0], labels=[f"{x:.3g}" for x in weights], padding=2)
    ax_w.set_ylim(0, 1.15)
    fig.tight_layout()
    return ax_s, ax_w


def plot_cosine_panels(cosines):
    """One histogram of cosines per dimension, with the exact density and ±1/√d dashed.

    ``cosines`` maps a dimension ``d`` to an array of cosines between random pairs.

    >>> axes = plot_cosine_panels({3: np.array([-0.5, 0.2, 0.9])})
    >>> print(axes[0].get_xlabel())
    $\\cos\\theta$, $d = 3$
    >>> plt.close("all")
    """
    fig, axes = plt.subplots(1, len(cosines), figsize=(2.2 * len(cosines), 2.6),
                             sharex=True, squeeze=False)
    axes = axes[0]
    fig.subplots_adjust(left=0.05, right=0.99, bottom=0.2, top=0.96, wspace=0.3)
    t = np.linspace(-0.995, 0.995, 400)
    for ax, (d, c) in zip(axes, cosines.items(), strict=True):
        heights, edges = np.histogram(c, bins=50, range=(-1, 1), density=True)
        ax.stairs(heights, edges, fill=True, color=COLORS["blue"], alpha=0.75)
        ax.plot(t, cosine_pdf(t, d), color="black", lw=1)
        for sign in (-1, 1):
            ax.axvline(sign / math.sqrt(d), color=COLORS["vermillion"], ls="--")
        ax.set_ylim(0, 1.15 * max(cosine_pdf(0.0, d), 1.6))
        ax.set_xticks([-1, 0, 1])
        ax.set_xlabel(rf"$\cos\theta$, $d = {d}$")
    axes[0].set_ylabel("density")
    return axes


def plot_packing(greedy, eps_greedy, tolerances=(0.1, 0.2, 0.3), ax=None):
    """The guarantee of the packing theorem against d, the greedy counts, and the line d.

    ``greedy`` maps a dimension to the number of vectors the greedy search kept at tolerance
    ``eps_greedy``. Both axes logarithmic.

    >>> ax = plot_packing({8: 8, 16: 19}, 0.3)
    >>> ax.get_xlabel()
    'dimension $d$'
    >>> plt.close("all")
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.8))
    d_grid = np.unique(np.geomspace(8, 4096, 40).astype(int))
    colors = (COLORS["blue"], COLORS["orange"], COLORS["green"])
    for eps, color in zip(tolerances, colors, strict=False):
        bound = [packing_lower_bound(int(d), eps) for d in d_grid]
        ax.plot(d_grid, np.maximum(bound, 0.5), color=color,
                label=rf"guarantee, $\varepsilon = {eps}$")
    ax.plot(list(greedy), list(greedy.values()), "o", color=COLORS["green"],
            label=rf"greedy search, $\varepsilon = {eps_greedy}$")
    ax.plot(d_grid, d_grid, color="0.5", lw=1.5, label=r"orthonormal basis ($d$)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1, 1e12)
    superscript = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:g}")  # 10, 100, 1000
    ax.yaxis.set_major_formatter(
        lambda y, _: "10" + f"{math.log10(y):.0f}".translate(superscript))
    ax.set_xlabel(r"dimension $d$")
    ax.set_ylabel("number of vectors")
    ax.legend(loc="upper left")
    return ax
