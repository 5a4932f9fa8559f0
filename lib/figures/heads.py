"""Figures of the chapter "Many heads and the value path": its control and its three pictures.

The numerics live in :mod:`lib.heads`; these functions only draw them.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from lib.attention import attention_weights
from lib.heads import (
    TASK_TOKENS,
    TASK_WIDTH,
    head_circuits,
    split_heads,
    two_offset_error,
    two_offset_layer,
)
from lib.plotting import COLORS
from lib.widgets import Choice, Slider

#: The score gaps the task control offers.
BETAS = (0, 1, 2, 3, 4, 5, 6, 7, 8)


def task_head_weights(n_heads: int, beta: float) -> list[np.ndarray]:
    """Each head's ``N × N`` weights on the two-offset task, computed from the layer itself.

    >>> [P.shape for P in task_head_weights(2, 4)]
    [(8, 8), (8, 8)]
    """
    W_Q, W_K, _, _ = two_offset_layer(n_heads, beta)
    positions = np.hstack([np.zeros((TASK_TOKENS, TASK_WIDTH)), np.eye(TASK_TOKENS)])
    Q, K = (split_heads(positions @ W, n_heads) for W in (W_Q, W_K))  # scores ignore content
    return [attention_weights(Q[i], K[i]) for i in range(n_heads)]


def setup_task(fig):
    """Draw the control's frame: two weight grids and the error against β.

    >>> import matplotlib.pyplot as plt
    >>> fig = plt.figure(figsize=(7, 2.6))
    >>> art = setup_task(fig)
    >>> len(art["images"]), art["note"].get_text()
    (2, '')
    >>> update_task(art, 1, 4)
    >>> art["head2"].get_title()
    '(no second head)'
    >>> plt.close(fig)
    """
    # two weight grids side by side, then a wider gap (where a phone cuts the frame), the error
    axes = [fig.add_axes(box) for box in ([0.06, 0.2, 0.2, 0.64], [0.29, 0.2, 0.2, 0.64],
                                          [0.66, 0.2, 0.32, 0.64])]
    images = []
    for ax, name in zip(axes[:2], ("head 1", "head 2"), strict=True):
        images.append(ax.imshow(np.zeros((TASK_TOKENS, TASK_TOKENS)), cmap="viridis", vmin=0,
                                vmax=1, interpolation="nearest"))
        ax.set(xticks=range(0, TASK_TOKENS, 2), yticks=range(0, TASK_TOKENS, 2), xlabel=r"key $j$")
        ax.set_title(name, fontsize=10)
        ax.grid(False)
    axes[0].set_ylabel(r"query $t$")
    axes[1].set_yticklabels([])
    for n, color in ((1, COLORS["vermillion"]), (2, COLORS["blue"])):
        axes[2].plot(BETAS, [two_offset_error(n, b) for b in BETAS], color=color, marker="o",
                     markersize=3, label=f"{n} head{'s' if n == 2 else ''}")
    axes[2].axhline(0.5, color="0.5", lw=0.8, ls="--")
    marker, = axes[2].plot([], [], "o", ms=10, mfc="none", mec="black", mew=1.5)
    axes[2].set(xlabel=r"score gap $\beta$", ylabel="relative error", ylim=(-0.03, 0.93))
    axes[2].legend(loc="upper right")
    note = axes[2].set_title("", fontsize=10)
    return {"images": images, "marker": marker, "note": note, "head2": axes[1]}


def update_task(art, n_heads, beta):
    """Show the weights of ``n_heads`` heads at score gap ``beta`` and mark the error.

    >>> import matplotlib.pyplot as plt
    >>> fig = plt.figure(figsize=(7, 2.6))
    >>> art = setup_task(fig)
    >>> update_task(art, 2, 8)
    >>> art["note"].get_text().startswith("2 heads, β = 8: error")
    True
    >>> plt.close(fig)
    """
    P = task_head_weights(n_heads, beta)
    art["images"][0].set_data(P[0])
    art["images"][1].set_data(P[1] if n_heads == 2
                              else np.full((TASK_TOKENS, TASK_TOKENS), np.nan))
    art["head2"].set_title("head 2" if n_heads == 2 else "(no second head)", fontsize=10)
    err = two_offset_error(n_heads, beta)
    art["marker"].set_data([beta], [err])
    art["note"].set_text(f"{n_heads} head{'s' if n_heads == 2 else ''}, β = {beta}: "
                         f"error {err:.3f}")


#: The control's inputs: one or two heads, and the score gap.
TASK_PARAMS = [Choice("n_heads", (1, 2), 2, label="heads"),
               Slider("beta", BETAS, 4, label="score gap β", integer=True)]
#: The control's alt text, filled in with its inputs.
TASK_ALT = ("Weights of {n_heads} head(s) on the two-offset task at score gap β = {beta}, as 8 "
            "by 8 grids of query against key, and the relative error of the layer against β "
            "for one and for two heads.")


def plot_hull(values, outputs, ax=None):
    """The values as the corners of a polygon, filled, and the outputs as a cloud of dots.

    >>> import matplotlib.pyplot as plt
    >>> ax = plot_hull([[0, 0], [1, 0], [0, 1]], [[0.2, 0.2], [0.5, 0.1]])
    >>> len(ax.collections), ax.get_xlabel()
    (2, 'first component')
    >>> plt.close(ax.figure)
    """
    values, outputs = np.asarray(values), np.asarray(outputs)
    if ax is None:
        _, ax = plt.subplots(figsize=(4.4, 3.2))
    ax.fill(*values.T, color=COLORS["sky"], alpha=0.15)
    ax.plot(*np.vstack([values, values[:1]]).T, color="0.3", lw=1)
    ax.scatter(*outputs.T, s=2, color=COLORS["blue"], alpha=0.4)
    ax.scatter(*values.T, s=30, color="black", zorder=3)
    for j, (x, y) in enumerate(values):
        ax.annotate(f"$v_{j + 1}$", (x, y), textcoords="offset points", xytext=(6, 4))
    ax.set(aspect="equal", xlabel="first component", ylabel="second component")
    return ax


def plot_task_circuits(beta: float = 4.0):
    """The two heads of the task: QK circuits on the position block, OV on the content rows.

    >>> import matplotlib.pyplot as plt
    >>> axes = plot_task_circuits(4.0)
    >>> axes.shape, axes[0, 0].get_title()
    ((2, 2), 'head 1: QK, positions')
    >>> plt.close(axes[0, 0].figure)
    """
    QK, OV = head_circuits(*two_offset_layer(2, beta), 2)
    d_c = TASK_WIDTH
    fig, axes = plt.subplots(2, 2, figsize=(6.4, 3.9), gridspec_kw={"height_ratios": [1, 0.75]})
    for i in range(2):
        axes[0, i].imshow(QK[i][d_c:, d_c:], cmap="viridis", interpolation="nearest")
        axes[0, i].set(title=f"head {i + 1}: QK, positions", xlabel="key position",
                       ylabel="query position")
        axes[1, i].imshow(OV[i][:d_c], cmap="viridis", interpolation="nearest")
        axes[1, i].set(title=f"head {i + 1}: OV, content", xlabel="output dimension",
                       ylabel="content")
    for ax in axes.flat:
        ax.set(xticks=[], yticks=[])
        ax.grid(False)
    fig.tight_layout()
    return axes


def plot_collapse(curves: dict, ax=None):
    """``res(X_l)/res(X_0)`` against the layer, one line per entry of ``curves`` (label: ratios).

    Values below 1e-17 are drawn at 1e-17, the floor of the axis.

    >>> import matplotlib.pyplot as plt
    >>> ax = plot_collapse({"no skip": [1, 0.1, 0.0]})
    >>> ax.lines[0].get_ydata().tolist()
    [1.0, 0.1, 1e-17]
    >>> plt.close(ax.figure)
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(5.6, 3.2))
    styles = [(COLORS["vermillion"], "-"), (COLORS["blue"], "--"), (COLORS["green"], ":"),
              (COLORS["orange"], "-.")]
    for (label, r), (color, ls) in zip(curves.items(), styles, strict=False):
        r = np.asarray(r)
        ax.semilogy(range(len(r)), np.maximum(r, 1e-17), color=color, ls=ls, marker="o", ms=3,
                    label=label)
    ax.set(xlabel=r"layer $l$", ylabel=r"$\operatorname{res}(X_l) / \operatorname{res}(X_0)$",
           ylim=(1e-17, 100))
    ax.legend(fontsize=8, loc="lower left")
    return ax
