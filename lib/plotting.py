"""The house plotting style and small plot helpers that take ``ax=None`` and return the Axes.

Colours are the Okabe–Ito palette (safe for colour-blind readers). Figures have a white
face so they stay legible on the site's dark theme. Titles are left to MyST captions.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

#: Okabe–Ito colours, in the order the house style cycles through them.
COLORS = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}

STYLE = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.prop_cycle": mpl.cycler(
        color=[COLORS[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky")]
    ),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "font.family": "DejaVu Sans",
    "svg.hashsalt": "attention-math",
    "path.simplify": True,
}


def use_house_style() -> None:
    """Apply the house style to every figure drawn after this call.

    >>> use_house_style(); mpl.rcParams["axes.spines.top"]
    False
    """
    mpl.rcParams.update(STYLE)


def get_ax(ax=None, figsize=None):
    """Return ``ax``, or a new Axes on a new figure when ``ax`` is ``None``.

    >>> ax = get_ax(); get_ax(ax) is ax
    True
    >>> plt.close(ax.figure)
    """
    if ax is not None:
        return ax
    _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_distribution(values, probs, ax=None, color=None, label=None):
    """Bar chart of a finite distribution ``P(X = x)``.

    >>> ax = plot_distribution([1, 2], [0.5, 0.5]); plt.close(ax.figure)
    """
    values = np.asarray([float(v) for v in values])
    probs = np.asarray([float(p) for p in probs])
    if values.size == 0 or values.shape != probs.shape:
        raise ValueError("values and probs must be non-empty and of the same length")
    ax = get_ax(ax)
    ax.bar(values, probs, width=0.6, color=color or COLORS["blue"], label=label)
    ax.set_xlabel("x")
    ax.set_ylabel("P(X = x)")
    return ax


def plot_histogram(samples, ax=None, bins=60, range=None, color=None, label=None, density=True):
    """Histogram of samples (density by default) with a lower-case axis label.

    >>> ax = plot_histogram([0.0, 1.0, 1.0]); plt.close(ax.figure)
    """
    samples = np.asarray(samples, dtype=float)
    if samples.size == 0:
        raise ValueError("samples is empty")
    ax = get_ax(ax)
    ax.hist(samples, bins=bins, range=range, density=density, color=color, alpha=0.75,
            label=label)
    ax.set_ylabel("density" if density else "count")
    return ax


def plot_weights(weights, ax=None, labels=None, color=None):
    """Bar chart of one row of attention weights (a probability vector).

    >>> ax = plot_weights([0.25, 0.75]); plt.close(ax.figure)
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 1 or weights.size == 0:
        raise ValueError("weights must be a non-empty 1-D vector")
    ax = get_ax(ax)
    x = np.arange(weights.size)
    ax.bar(x, weights, color=color or COLORS["orange"])
    ax.set_xticks(x, labels if labels is not None else [f"k{j + 1}" for j in x])
    ax.set_ylim(0, 1)
    ax.set_ylabel("weight")
    return ax
