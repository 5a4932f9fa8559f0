"""Figures of *Variance through depth*: the drawing code its hidden cells call.

The chapter's visible cells run the experiments; these functions only simulate what a figure
shows (:func:`plot_hook`) or draw what a visible cell computed (:func:`plot_funnel`,
:func:`plot_residual`). Each takes ``ax=None`` (or ``axes``) and returns what it drew on.
"""

from __future__ import annotations

import numpy as np

from ..depth import simulate_stack, stack_theory
from ..plotting import COLORS, get_ax

__all__ = ["HOOK_CASES", "plot_funnel", "plot_hook", "plot_residual"]

#: The hook's stacks: label -> (init, activation, gain), with σ² = gain × the init's variance.
HOOK_CASES = {
    "linear, gain 2": ("fan_in", "linear", 2.0),
    "linear, gain 1": ("fan_in", "linear", 1.0),
    "linear, gain 0.5": ("fan_in", "linear", 0.5),
    "ReLU, σ² = 1/n": ("fan_in", "relu", 1.0),
    "ReLU, He σ² = 2/n": ("he", "relu", 1.0),
}


def plot_hook(rng: np.random.Generator, L: int = 50, width: int = 64, n_nets: int = 8,
              ax=None):
    """The mean square through ``L`` random layers of ``width`` for :data:`HOOK_CASES`.

    Lines are :func:`lib.depth.stack_theory`, dots every fifth layer the average of ``n_nets``
    networks of :func:`lib.depth.simulate_stack` (drawn from ``rng`` in the order of the cases).
    Returns the Axes.

    >>> import matplotlib.pyplot as plt
    >>> ax = plot_hook(np.random.default_rng(0), L=5, n_nets=2)
    >>> len(ax.lines)
    10
    >>> plt.close(ax.figure)
    """
    ax = get_ax(ax, figsize=(6.4, 3.8))
    widths = [width] * (L + 1)
    layers = np.arange(L + 1)
    for (label, (init, act, gain)), color in zip(HOOK_CASES.items(), COLORS.values(), strict=False):
        q_theory, _ = stack_theory(widths, init, act, gain)
        q_sim, _ = simulate_stack(widths, init, act, rng, gain, n_nets=n_nets)
        ax.plot(layers, q_theory, color=color, label=label, lw=1.5,
                ls="--" if init == "he" else "-")
        ax.plot(layers[::5], q_sim.mean(axis=0)[::5], "o", color=color, ms=4)
    ax.set(yscale="log", xlabel=r"layer $l$", ylabel=r"mean square of $h_l$", ylim=(1e-17, 1e17))
    ax.legend(loc="upper left", ncol=2, fontsize=8)
    return ax


def plot_funnel(runs, axes=None):
    """Forward ``q_l`` and backward ``r_l`` through a funnel, predicted (lines) and simulated.

    ``runs`` maps an initialization's name to ``(q, r, q_simulated, r_simulated)``, four arrays
    over the layers. Draws on two Axes (``axes``, or a new figure's) and returns them.

    >>> import matplotlib.pyplot as plt
    >>> one = np.ones(3)
    >>> ax_q, ax_r = plot_funnel({"fan_in": (one, one / 2, one, one / 2)})
    >>> len(ax_q.lines), len(ax_r.lines)
    (2, 2)
    >>> plt.close(ax_q.figure)
    """
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, 2, figsize=(7.6, 3.2), sharey=True)
    ax_q, ax_r = axes
    for (init, (q, r, q_mean, r_mean)), color in zip(runs.items(), COLORS.values(), strict=False):
        layers = range(len(q))
        for ax, exact, sim in ((ax_q, q, q_mean), (ax_r, r, r_mean)):
            ax.plot(layers, exact, color=color, label=init)
            ax.plot(layers, sim, "o", color=color, ms=4)
    ax_q.set(yscale="log", xlabel=r"layer $l$", ylabel="second moment", xticks=layers)
    ax_r.set(xlabel=r"layer $l$", xticks=layers)
    ax_q.set_title(r"forwards $q_l$", fontsize=10)
    ax_r.set_title(r"backwards $r_l$", fontsize=10)
    ax_r.legend(fontsize=8)
    return ax_q, ax_r


def plot_residual(stream_ms, g: float, ax=None):
    """Mean square of a residual stream against layer, one line per placement, with 1 + g l.

    ``stream_ms`` maps a label to an array of shape ``(networks, L + 1)``; each line is its
    average over the networks. Returns the Axes.

    >>> import matplotlib.pyplot as plt
    >>> ax = plot_residual({"pre-LN": np.ones((2, 4))}, 0.5)
    >>> len(ax.lines)
    2
    >>> plt.close(ax.figure)
    """
    ax = get_ax(ax, figsize=(6.4, 3.6))
    for (name, ms), color in zip(stream_ms.items(), COLORS.values(), strict=False):
        layers = np.arange(ms.shape[1])
        ax.plot(layers, ms.mean(axis=0), color=color, label=name)
    ax.plot(layers, 1 + g * layers, ":", color=COLORS["black"], lw=1, label=r"$1 + g\,l$")
    ax.set(yscale="log", xlabel=r"layer $l$", ylabel=r"mean square of $x_l$")
    ax.legend(fontsize=8)
    return ax
