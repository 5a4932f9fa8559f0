"""Figures and controls of the chapter *Position* (``book/position.md``).

The chapter's visible cells compute; these functions only draw what they are given (or what
:mod:`lib.position` gives them), so that the page shows the experiment and not the plumbing.
Each figure function returns its Figure; the chapter's cell ends with ``plt.show()``.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ..attention import scores
from ..masks import causal_mask, masked_softmax
from ..plotting import COLORS
from ..position import alibi_bias, position_frequencies
from ..widgets import Slider

__all__ = [
    "alibi_parts",
    "plot_decay",
    "plot_dot_products",
    "plot_encodings",
    "plot_extrapolation",
    "plot_four_terms",
    "rotation_parts",
]


def _turn(v, angle):
    """The 2-D vector ``v`` turned by ``angle`` (radians), counter-clockwise."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _rotation_setup(fig, offsets):
    """The opening control's two panels: the plane of one pair (left) and the score against
    the offset (right); returns the artists that :func:`rotation_parts`' update moves."""
    ax_plane, ax_score = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    arrows = {}
    for name, color, alpha in (("q", COLORS["vermillion"], 1.0), ("k", COLORS["blue"], 1.0),
                               ("q5", COLORS["vermillion"], 0.35),
                               ("k5", COLORS["blue"], 0.35)):
        arrows[name] = ax_plane.annotate("", xy=(1, 0), xytext=(0, 0), arrowprops=dict(
            arrowstyle="-|>", color=color, alpha=alpha, lw=2))
    ax_plane.set(xlim=(-1.6, 1.6), ylim=(-1.6, 1.6), aspect="equal", xticks=[-1, 0, 1],
                 yticks=[-1, 0, 1], xlabel=r"coordinate $2i$", ylabel=r"coordinate $2i + 1$")
    ax_plane.text(-1.5, 1.35, r"$q$ (query)", color=COLORS["vermillion"], fontsize=9)
    ax_plane.text(-1.5, 1.1, r"$k$ (key)", color=COLORS["blue"], fontsize=9)
    curve, = ax_score.plot([], [], color=COLORS["black"], lw=1.2)
    dot, = ax_score.plot([], [], "o", color=COLORS["vermillion"], ms=7)
    ax_score.axvline(0, color="0.6", lw=0.8)
    ax_score.set(xlim=(offsets[0], offsets[-1]), ylim=(-1.9, 2.9),
                 yticks=[-1.5, 0, 1.5], xlabel=r"offset $m - n$", ylabel=r"score $q_m \cdot k_n$")
    readout = ax_score.text(0.02, 0.97, "", transform=ax_score.transAxes, va="top",
                            fontsize=9, family="monospace")
    fig.tight_layout()
    return {"arrows": arrows, "curve": curve, "dot": dot, "readout": readout}


def rotation_parts(q_pair=(1.2, 0.5), k_pair=(1.0, 0.9), max_offset=9):
    """The opening control's parts, for ``Control(**parts)``: one pair of a query and a key
    turned by their positions.

    The key sits at position ``n = 10`` (and a faint copy at 15), the query at ``n + offset``;
    the right panel draws the score ``q_m · k_n`` against the offset ``m − n``, from
    ``−max_offset`` to ``max_offset``, so that its asymmetry shows.

    >>> from lib.widgets import Control
    >>> sorted(rotation_parts(max_offset=2))
    ['alt', 'figsize', 'params', 'setup', 'update']
    >>> Control(**rotation_parts(max_offset=2)).values
    {'offset': 2, 'omega': 0.6}
    """
    q_pair, k_pair = np.asarray(q_pair, float), np.asarray(k_pair, float)
    offsets = np.arange(-max_offset - 3, max_offset + 4)

    def setup(fig):
        return _rotation_setup(fig, offsets)

    def update(art, offset, omega):
        n = 10
        for tag, shift in (("", 0), ("5", 5)):
            art["arrows"]["q" + tag].xy = _turn(q_pair, (n + offset + shift) * omega)
            art["arrows"]["k" + tag].xy = _turn(k_pair, (n + shift) * omega)
        art["curve"].set_data(offsets, [_turn(q_pair, o * omega) @ k_pair for o in offsets])
        score = _turn(q_pair, (n + offset) * omega) @ _turn(k_pair, n * omega)
        art["dot"].set_data([offset], [score])
        art["readout"].set_text(f"ω = {omega} rad per position\n"
                                rf"$q_m \cdot k_n$ = {score:5.2f} at both places")

    return dict(setup=setup, update=update, params=[
        Slider("offset", tuple(range(-max_offset, max_offset + 1)), min(3, max_offset),
               label="offset m − n", integer=True),
        Slider("omega", (0.1, 0.3, 0.6, 1.0), 0.6, label="frequency ω"),
    ], alt="Left: a query arrow and a key arrow in the plane, turned by their positions, for "
           "offset {offset} and frequency {omega}; a faint copy five positions later has the "
           "same angle between them. Right: the score against the offset, a cosine that is not "
           "symmetric about offset 0, with a dot at offset {offset}.", figsize=(7.4, 3.2))


def plot_encodings(P):
    """Heat map of sinusoidal encodings ``P`` (one row a position), on the scale −1 to 1.

    >>> fig = plot_encodings(np.zeros((3, 4)))
    >>> plt.close(fig)
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    image = ax.imshow(P, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    fig.colorbar(image, ax=ax, label=r"$p_t$, coordinate")
    ax.set(xlabel=r"coordinate (pairs $2i$, $2i + 1$)", ylabel=r"position $t$")
    ax.grid(False)
    return fig


def plot_dot_products(widths=(64, 512), max_offset=150):
    """The normalised dot product ``p_m · p_n / (d/2)`` against ``m − n``, one curve a width.

    >>> fig = plot_dot_products(widths=(4,), max_offset=3)
    >>> plt.close(fig)
    """
    offsets = np.arange(-max_offset, max_offset + 1)
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for width in widths:
        omega = position_frequencies(width)
        ax.plot(offsets, np.cos(offsets[:, None] * omega).mean(axis=1), label=rf"$d = {width}$")
    ax.set(xlabel=r"offset $m - n$", ylabel=r"$p_m \cdot p_n \,/\, (d/2)$")
    ax.legend()
    return fig


def plot_four_terms(grids, names):
    """The four terms of a score as heat maps side by side, on one diverging colour scale.

    >>> fig = plot_four_terms([np.eye(2)] * 4, ["a", "b", "c", "d"])
    >>> plt.close(fig)
    """
    lim = max(np.abs(g).max() for g in grids)
    fig, axes = plt.subplots(1, len(grids), figsize=(9, 2.7))
    for ax, grid, name in zip(axes, grids, names, strict=True):
        image = ax.imshow(grid, cmap="PuOr_r", vmin=-lim, vmax=lim, interpolation="nearest")
        ax.set_title(name, fontsize=9)
        last = len(grid) - 1
        ax.set(xticks=[0, last], yticks=[0, last], xlabel=r"key position $n$")
        ax.grid(False)
    axes[0].set_ylabel(r"query position $m$")
    fig.colorbar(image, ax=axes, label="term of the score", shrink=0.85)
    return fig


def plot_decay(d_k, max_offset=20000, n_offsets=300):
    """RoPE's "long-term decay" against the offset (log scale), each curve divided by its value
    at offset 0: the expected same-content score, the paper's bound ``(2/d_k) Σ_j |C_j|``, and
    the ±1 sd band of independent standard normal query and key.

    >>> fig = plot_decay(8, max_offset=100, n_offsets=20)
    >>> plt.close(fig)
    """
    omega = position_frequencies(d_k)
    offsets = np.unique(np.round(np.logspace(0, np.log10(max_offset), n_offsets)))
    same = np.cos(offsets[:, None] * omega).mean(axis=1)
    C_partial = np.cumsum(np.exp(1j * offsets[:, None] * omega), axis=1)  # C_1 … C_{d_k/2}
    bound = np.abs(C_partial).mean(axis=1) / np.arange(1, d_k // 2 + 1).mean()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.fill_between(offsets, -1 / math.sqrt(d_k), 1 / math.sqrt(d_k), color=COLORS["sky"],
                    alpha=0.35, label=r"independent $q$, $k$: $\pm 1$ sd / $d_k$")
    ax.plot(offsets, same, color=COLORS["black"],
            label=r"same content: $\mathbb{E}$[score] / $d_k$")
    ax.plot(offsets, bound, color=COLORS["orange"], label="paper's bound / its value at 0")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set(xscale="log", xlabel=r"offset $m - n$", ylabel="relative size")
    ax.legend(loc="upper right")
    return fig


def alibi_parts(N=16, seed=10, slopes=(0.0, 1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2,
                                        1.0, 2.0)):
    """The ALiBi control's parts, for ``Control(**parts)``: causal attention weights of ``N``
    random tokens with the ALiBi bias of a chosen slope.

    The readout gives the halving distance ``ln 2 / λ`` and the last query's weight on its
    four nearest keys.

    >>> from lib.widgets import Control
    >>> Control(**alibi_parts(N=4, slopes=(0.0, 1.0))).values
    {'slope': 1.0}
    """
    rng = np.random.default_rng(seed)
    S = scores(rng.standard_normal((N, 8)), rng.standard_normal((N, 8)))
    mask = causal_mask(N)
    ticks = [t for t in (0, 5, 10, 15) if t < N]

    def setup(fig):
        ax = fig.subplots()
        cmap = plt.get_cmap("viridis").with_extremes(bad="0.85")
        image = ax.imshow(np.full((N, N), np.nan), cmap=cmap, vmin=0, vmax=1,
                          interpolation="nearest")
        fig.colorbar(image, ax=ax, label="weight")
        ax.set(xticks=ticks, yticks=ticks, xlabel=r"key position $n$", ylabel=r"query position $m$")
        ax.grid(False)
        note = ax.text(1.4, 1.0, "", transform=ax.transAxes, va="top", fontsize=9)
        fig.subplots_adjust(left=0.08, right=0.6, bottom=0.15, top=0.95)
        return {"image": image, "note": note}

    def update(art, slope):
        weights = masked_softmax(S + alibi_bias(N, slope), mask)
        art["image"].set_data(np.where(mask, weights, np.nan))
        near = weights[-1, -4:].sum()                       # the last query's 4 nearest keys
        reach = "no decay" if slope == 0 else f"halves every {math.log(2) / slope:.1f} keys"
        art["note"].set_text(f"slope λ = {slope:g}\nweight {reach}\n\n"
                             f"last query: {near:.2f} of its\nweight on the 4 nearest keys")

    return dict(setup=setup, update=update, params=[
        Slider("slope", tuple(slopes), 1 / 4 if 1 / 4 in slopes else slopes[-1],
               label="slope λ", fmt="{:.3g}"),
    ], alt=f"Heat map of causal attention weights of {N} tokens with the ALiBi bias of slope "
           "{slope}; masked pairs above the diagonal are light grey, and larger slopes "
           "concentrate each row near the diagonal.", figsize=(6.4, 3.6))


def plot_extrapolation(turns_train, turns_new, turns_interp, first_slow, L_train, L_new):
    """Turns covered by each RoPE pair over the training length, a longer length, and the
    longer length with position interpolation (log scale).

    >>> fig = plot_extrapolation(np.ones(3), np.ones(3), np.ones(3), 1, 2, 4)
    >>> plt.close(fig)
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    pairs = np.arange(len(turns_train))
    ax.plot(pairs, turns_new, color=COLORS["vermillion"], label=f"{L_new} positions")
    ax.plot(pairs, turns_train, color=COLORS["black"], lw=3, label=f"training, {L_train}")
    ax.plot(pairs, turns_interp, color=COLORS["sky"], ls="--", label=f"{L_new}, interpolated")
    ax.axhline(1, color="0.5", lw=0.8)
    ax.axvline(first_slow, color="0.5", ls=":")
    ax.set(yscale="log", xlabel=r"pair $i$", ylabel="turns covered")
    ax.legend()
    return fig
