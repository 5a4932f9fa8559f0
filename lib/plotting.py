"""The house plotting style and small plot helpers that take ``ax=None`` and return the Axes.

Colours are the Okabe–Ito palette (safe for colour-blind readers). Figures have a white
face so they stay legible on the site's dark theme. Titles are left to MyST captions.

* style: :data:`COLORS`, :data:`STYLE`, :func:`use_house_style`, :func:`get_ax`;
* distributions: :func:`plot_distribution`, :func:`plot_histogram`,
  :func:`plot_normal_density`, :func:`plot_curves`;
* attention: :func:`plot_weights`, :func:`plot_score_grid`;
* vectors: :func:`plot_vectors_2d` and :func:`update_vectors_2d` (the shadow picture).
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

from ._checks import plane_vector

__all__ = [
    "COLORS",
    "STYLE",
    "get_ax",
    "plot_curves",
    "plot_distribution",
    "plot_histogram",
    "plot_normal_density",
    "plot_score_grid",
    "plot_vectors_2d",
    "plot_weights",
    "update_vectors_2d",
    "use_house_style",
]

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
    """Apply the house style to every figure drawn after this call; under IPython, also give
    every wide figure a narrow variant for phones (:func:`lib.widgets.narrow.install`).

    >>> use_house_style(); mpl.rcParams["axes.spines.top"]
    False
    """
    mpl.rcParams.update(STYLE)
    from .widgets.narrow import install  # here: lib.widgets imports this module

    install()


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


def _shadow_offset(a, b_hat):
    """A small shift perpendicular to ``b``, away from ``a``, that keeps the shadow visible."""
    normal = np.array([-b_hat[1], b_hat[0]])  # b turned by +90°
    side = -1.0 if a @ normal > 0 else 1.0    # the side of the line through b away from a
    return side * 0.05 * max(np.hypot(*a), 1.0) * normal


def update_vectors_2d(ax, a, b):
    """Move the artists drawn by :func:`plot_vectors_2d` to new vectors ``a`` and ``b``.

    Only existing artists are changed (no new ones), so an interactive control stays fast.

    >>> ax = plot_vectors_2d([3, 4], [4, 3]); ax = update_vectors_2d(ax, [1, 0], [0, 1])
    >>> plt.close(ax.figure)
    """
    a, b = plane_vector(a, "a"), plane_vector(b, "b")
    parts = {art.get_gid(): art for art in ax.get_children() if art.get_gid()}
    if "vec-a" not in parts:
        raise ValueError("ax has no vectors drawn by plot_vectors_2d")
    b_hat = b / np.hypot(*b)
    foot = (a @ b_hat) * b_hat  # the shadow of a on the line through b
    off = _shadow_offset(a, b_hat)  # drawn beside b, not under it
    tick = 0.7 * off
    parts["vec-a"].xy = tuple(a)
    parts["vec-b"].xy = tuple(b)
    parts["b-line"].set_data([-100 * b_hat[0], 100 * b_hat[0]], [-100 * b_hat[1], 100 * b_hat[1]])
    parts["shadow"].set_data([off[0], foot[0] + off[0]], [off[1], foot[1] + off[1]])
    ends = np.array([tick, off + tick, [np.nan, np.nan], foot + tick, foot + off + tick])
    parts["shadow-ends"].set_data(ends[:, 0], ends[:, 1])
    parts["drop"].set_data([a[0], foot[0] + off[0]], [a[1], foot[1] + off[1]])
    parts["label-shadow"].set_position(tuple(0.5 * foot + 3.2 * off))
    phi_a, phi_b = np.arctan2(a[1], a[0]), np.arctan2(b[1], b[0])
    turn = (phi_a - phi_b + np.pi) % (2 * np.pi) - np.pi  # signed angle from b to a
    if np.isclose(turn, -np.pi):  # opposite vectors: draw the arc counter-clockwise
        turn = np.pi
    r = 0.3 * min(np.hypot(*a), np.hypot(*b))
    s = phi_b + np.linspace(0.0, turn, 40)
    parts["arc"].set_data(r * np.cos(s), r * np.sin(s))
    mid = phi_b + turn / 2
    parts["theta"].set_position((1.5 * r * np.cos(mid), 1.5 * r * np.sin(mid)))
    parts["label-a"].set_position(tuple(1.08 * a))
    parts["label-b"].set_position(tuple(1.08 * b))
    return ax


def plot_vectors_2d(a, b, ax=None, labels=("a", "b")):
    """Two 2-D vectors from the origin, the angle θ between them and the shadow of ``a`` on ``b``.

    The shadow is the vector projection ``(a·b / b·b) b``, reached by a dashed perpendicular
    drop from the tip of ``a``; its signed length is ``a·b / ‖b‖ = ‖a‖ cos θ``. It is drawn as
    a thick green bar with end marks just beside the line through ``b`` (on the side away
    from ``a``), so that ``b`` does not hide it.

    >>> ax = plot_vectors_2d([3, 4], [4, 3]); plt.close(ax.figure)
    """
    a, b = plane_vector(a, "a"), plane_vector(b, "b")
    ax = get_ax(ax)
    ax.plot([], [], color="0.6", lw=0.8, gid="b-line")
    ax.plot([], [], color=COLORS["green"], lw=4, alpha=0.9, solid_capstyle="butt",
            gid="shadow", label="shadow of a on b")
    ax.plot([], [], color=COLORS["green"], lw=1.5, gid="shadow-ends")
    ax.text(0, 0, "shadow", color=COLORS["green"], ha="center", va="center", fontsize=10,
            gid="label-shadow")
    ax.plot([], [], color="0.35", lw=1, ls="--", gid="drop")
    ax.plot([], [], color=COLORS["black"], lw=1, gid="arc")
    ax.text(0, 0, "θ", ha="center", va="center", gid="theta")
    for name, color, text in (("a", COLORS["blue"], labels[0]),
                              ("b", COLORS["vermillion"], labels[1])):
        ax.annotate("", xy=(1, 0), xytext=(0, 0), gid=f"vec-{name}",
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=2, shrinkA=0, shrinkB=0))
        ax.text(0, 0, text, color=color, ha="center", va="center", fontsize=11,
                gid=f"label-{name}")
    update_vectors_2d(ax, a, b)
    foot = (a @ b) / (b @ b) * b
    off = _shadow_offset(a, b / np.hypot(*b))
    pts = np.array([[0, 0], a, b, 1.15 * a, 1.15 * b, foot, 4 * off, foot + 4 * off])
    lo, hi = pts.min(axis=0) - 0.5, pts.max(axis=0) + 0.5
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.set_xlabel("x₁")
    ax.set_ylabel("x₂")
    return ax


def plot_score_grid(S, ax=None, labels=None, fmt="{:.1f}"):
    """Heatmap of a score matrix ``S = Q Kᵀ`` (rows: queries, columns: keys), values written in.

    The colour scale is diverging and centred on 0, so sign reads as hue and size as depth.

    >>> ax = plot_score_grid([[1.0, -1.0], [0.0, 2.0]]); plt.close(ax.figure)
    """
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.size == 0:
        raise ValueError(f"S must be a non-empty 2-D matrix, got shape {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError("S contains NaN or infinite values")
    if labels is not None and len(labels) != S.shape[0]:
        raise ValueError(f"labels needs one entry per row: {S.shape[0]} rows, {len(labels)} labels")
    ax = get_ax(ax)
    m = float(np.abs(S).max()) or 1.0
    image = ax.imshow(S, cmap="PuOr_r", vmin=-m, vmax=m)
    ax.figure.colorbar(image, ax=ax, label="score")
    for (i, j), value in np.ndenumerate(S):
        ax.text(j, i, fmt.format(value), ha="center", va="center", fontsize=8,
                color="white" if abs(value) > 0.6 * m else "black")
    rows = labels if labels is not None else [str(i) for i in range(S.shape[0])]
    cols = labels if labels is not None and S.shape[0] == S.shape[1] else [
        str(j) for j in range(S.shape[1])]
    ax.set_xticks(range(S.shape[1]), cols)
    ax.set_yticks(range(S.shape[0]), rows)
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    ax.grid(False)
    return ax


def plot_normal_density(ax=None, mu=0.0, sigma=1.0, x=None, color=None, label=None):
    """Overlay the normal density ``N(μ, σ²)`` as a line (default range ``μ ± 4σ``).

    .. math:: f(x) = \\frac{1}{\\sigma\\sqrt{2\\pi}} e^{-(x-\\mu)^2 / 2\\sigma^2}

    >>> ax = plot_normal_density(sigma=2.0); plt.close(ax.figure)
    """
    sigma = float(sigma)
    if not np.isfinite(sigma) or sigma <= 0 or not np.isfinite(float(mu)):
        raise ValueError(f"need a finite mu and sigma > 0, got mu={mu!r}, sigma={sigma!r}")
    ax = get_ax(ax)
    x = np.linspace(mu - 4 * sigma, mu + 4 * sigma, 401) if x is None else np.asarray(x, float)
    y = np.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))
    ax.plot(x, y, color=color or COLORS["black"], lw=1.2, label=label)
    return ax


def plot_curves(x, curves, ax=None, xlabel="step", ylabel="", logy=False):
    """Several curves over a shared x axis; ``curves`` maps a label to ``(y, style_dict)``.

    >>> ax = plot_curves([0, 1], {"a": ([1.0, 0.5], {})}); plt.close(ax.figure)
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size == 0 or not curves:
        raise ValueError("x must be a non-empty 1-D array and curves non-empty")
    ax = get_ax(ax)
    for label, (y, style) in curves.items():
        y = np.asarray(y, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"curve {label!r} has shape {y.shape}, x has {x.shape}")
        ax.plot(x, y, label=label, **style)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax
