"""Figures and table formatting of the chapter *Expectation and Variance*.

The chapter's visible cells run the experiments; the hidden cells call these functions to draw
their figures (Figs. 1.1 to 1.6) and to format the shares of its tables. Each function takes the
arrays the chapter computed and draws nothing that the chapter does not compute.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from lib.attention import softmax
from lib.plotting import COLORS, plot_curves, plot_distribution, plot_normal_density
from lib.probability import standard_error

__all__ = [
    "histogram_with_errors",
    "jacobian_norms",
    "mean_se",
    "plot_die",
    "plot_dot_histograms",
    "plot_saturation",
    "plot_shapes",
    "plot_sigmoid_slope",
    "plot_training",
    "share",
    "training_table",
]

#: The dimensions of Fig. 1.2 and of the dotted lines of Fig. 1.4.
D_KS = (4, 64, 512)


def share(flags, digits=1):
    """A share and its standard error ``√(p(1 − p)/n)``, one more digit for the error.

    >>> share([True, False, True, True])
    '0.8 ± 0.22'
    """
    p, n = np.mean(flags), len(flags)
    return f"{p:.{digits}f} ± {np.sqrt(p * (1 - p) / n):.{digits + 1}f}"


def mean_se(x):
    """A mean to one decimal and its standard error ``s/√n``.

    >>> mean_se([1.0, 2.0, 3.0])
    '2.0 ± 0.58'
    """
    return f"{np.mean(x):.1f} ± {standard_error(x):.2f}"


def training_table(runs):
    """The table of the training experiment, one line per run of ``runs`` (a dict
    ``(d_k, scale) → train_query result`` with ``start_weights`` and ``target`` added): the
    share of rows starting above 0.99, the median gradient norm at steps 0 and 1, and the
    shares solved (weight on the target above 0.9) and stuck (above 0.9 on a wrong key).

    >>> run = {"grad_norm": np.ones((2, 1)), "weights": np.array([[1.0, 0.0]]),
    ...        "start_weights": np.array([[0.5, 0.5]]), "target": np.array([0])}
    >>> print(training_table({(4, True): run}).splitlines()[1])
       4   ÷√d_k  0.0 ± 0.00   1.00  1e+00  1.0 ± 0.00  0.0 ± 0.00
    """
    lines = [f"{'d_k':>4} {'scaling':>7} {'start sat.':>11} {'‖∇‖ 0':>6} {'‖∇‖ 1':>6} "
             f"{'solved':>11} {'stuck':>11}"]
    for (d_k, scale), r in runs.items():
        g = np.median(r["grad_norm"], axis=1)
        rows = np.arange(len(r["target"]))
        solved = r["weights"][rows, r["target"]] > 0.9
        stuck = ~solved & (r["weights"].max(axis=1) > 0.9)  # > 0.9 on a wrong key
        lines.append(f"{d_k:>4} {'÷√d_k' if scale else 'none':>7} "
                     f"{share(r['start_weights'].max(axis=1) > 0.99):>11} {g[0]:>6.2f} "
                     f"{g[1]:>6.0e} {share(solved):>11} {share(stuck):>11}")
    return "\n".join(lines)


def jacobian_norms(p):
    """Frobenius norm of ``J = diag(p) − p pᵀ`` for each row ``p`` of ``(rows, m)``.

    ``‖J‖² = Σ_i p_i² [(1 − p_i)² + Σ_{j≠i} p_j²]``, with ``1 − p_i`` summed as ``Σ_{j≠i} p_j``:
    every term is non-negative, so nothing cancels, even for a nearly one-hot row.

    >>> jacobian_norms(np.array([[0.5, 0.5, 0.0]])).round(3).tolist()
    [0.5]
    """
    p = np.asarray(p, dtype=float)
    others = p[:, None, :] * (1 - np.eye(p.shape[1]))  # (rows, i, j): p_j for j ≠ i
    return np.sqrt((p**2 * (others.sum(axis=2) ** 2 + (others**2).sum(axis=2))).sum(axis=1))


def histogram_with_errors(ax, x, bins, color, ecolor=None, fill=False, label=None):
    """A density histogram of the draws ``x``, with ± 2 standard errors marked on each bar.

    >>> ax = plt.figure().subplots()
    >>> histogram_with_errors(ax, np.arange(10.0), 5, "k"); plt.close(ax.figure)
    """
    counts, edges = np.histogram(x, bins=bins)
    n, width = len(x), np.diff(edges)
    share_in_bin = counts / n
    density = share_in_bin / width  # what ax.hist(x, bins, density=True) draws
    se = np.sqrt(share_in_bin * (1 - share_in_bin) / n) / width  # binomial, as a density
    ax.stairs(density, edges, fill=fill, color=color, lw=1.5, alpha=0.75 if fill else 1.0,
              label=label)
    ax.errorbar((edges[:-1] + edges[1:]) / 2, density, yerr=2 * se,
                fmt="none", ecolor=ecolor or color, elinewidth=0.8)


def plot_die(faces, probs, mu, sigma):
    """Fig. 1.1: the die's distribution, its mean dashed and ``μ ± σ`` shaded.

    >>> ax = plot_die([1, 2], [0.5, 0.5], 1.5, 0.5); plt.close(ax.figure)
    """
    ax = plot_distribution(faces, probs)
    ax.axvline(float(mu), color=COLORS["black"], ls="--", lw=1.2, label="mean μ")
    ax.axvspan(float(mu) - sigma, float(mu) + sigma, color=COLORS["sky"],
               alpha=0.2, label="μ ± σ")
    ax.set_ylim(0, 0.25)
    ax.legend(loc="upper right")
    return ax


def plot_dot_histograms(samples):
    """Fig. 1.2: histograms of ``q·k`` (top) and ``q·k/√d_k`` (bottom) for each ``d_k`` of
    ``samples`` (a dict ``d_k → draws``), with the normal density of the same variance.

    >>> fig = plot_dot_histograms({4: np.arange(-3.0, 4.0)}); plt.close(fig)
    """
    fig, axes = plt.subplots(2, len(samples), figsize=(9, 4.8), squeeze=False)
    for col, (d_k, x) in enumerate(samples.items()):
        sd = np.sqrt(d_k)
        histogram_with_errors(axes[0, col], x, np.linspace(-4.5 * sd, 4.5 * sd, 61),
                              COLORS["vermillion"], ecolor=COLORS["black"], fill=True)
        plot_normal_density(ax=axes[0, col], sigma=sd)
        axes[0, col].set(xlabel=rf"$q\cdot k$   ($d_k = {d_k}$)", ylabel="density")
        histogram_with_errors(axes[1, col], x / sd, np.linspace(-4.5, 4.5, 61),
                              COLORS["blue"], ecolor=COLORS["black"], fill=True)
        plot_normal_density(ax=axes[1, col])
        axes[1, col].set(xlabel=rf"$q\cdot k/\sqrt{{d_k}}$   ($d_k = {d_k}$)",
                         ylabel="density")
    fig.tight_layout()
    return fig


def plot_sigmoid_slope(slope):
    """Fig. 1.3: the slope ``p₁(1 − p₁)`` of the two-key softmax against the gap, on a log
    scale, with ``e^(−|Δ|)`` dashed and markers at gaps 0 and 8 (``slope`` is the function).

    >>> ax = plot_sigmoid_slope(lambda g: np.exp(-np.abs(g)) / 4); plt.close(ax.figure)
    """
    gaps = np.linspace(-10, 10, 401)
    fig, ax = plt.subplots(figsize=(5.6, 3.2))
    ax.semilogy(gaps, slope(gaps), color=COLORS["vermillion"], label=r"$p_1(1 - p_1)$")
    ax.semilogy(gaps, np.exp(-np.abs(gaps)), color=COLORS["black"], ls="--", lw=1,
                label=r"$e^{-|\Delta|}$")
    ax.plot([0, 8], [slope(0.0), slope(8.0)], "o", color=COLORS["vermillion"])
    ax.set(xlabel=r"gap $\Delta = z_1 - z_2$", ylabel=r"slope $dp_1/d\Delta$", ylim=(1e-5, 1))
    ax.legend(loc="lower center")
    fig.tight_layout()
    return ax


def plot_saturation(cs, unit_rows):
    """Fig. 1.4: the rows ``c · unit_rows`` for each scale ``c`` of ``cs``; left, the mean
    largest weight; right, the median and mean ``‖J‖_F`` (bands of ± 2 standard errors).

    >>> fig = plot_saturation(np.array([1.0, 2.0]), np.eye(3)); plt.close(fig)
    """
    weights_by_c = [softmax(c * unit_rows, axis=-1) for c in cs]
    top_w = np.array([p.max(axis=1) for p in weights_by_c])  # (len(cs), rows)
    j_norms = np.array([jacobian_norms(p) for p in weights_by_c])  # (len(cs), rows)
    se_w = top_w.std(axis=1, ddof=1) / np.sqrt(top_w.shape[1])
    se_j = j_norms.std(axis=1, ddof=1) / np.sqrt(j_norms.shape[1])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3.2))
    ax1.semilogx(cs, top_w.mean(axis=1), color=COLORS["blue"])
    ax1.fill_between(cs, top_w.mean(axis=1) - 2 * se_w, top_w.mean(axis=1) + 2 * se_w,
                     color=COLORS["blue"], alpha=0.3, lw=0)
    ax1.set(xlabel=r"score scale $c$", ylabel="mean largest weight", ylim=(0, 1.1))
    ax2.loglog(cs, np.median(j_norms, axis=1), color=COLORS["vermillion"], label="median")
    ax2.loglog(cs, j_norms.mean(axis=1), color=COLORS["vermillion"], ls="--", label="mean")
    ax2.fill_between(cs, j_norms.mean(axis=1) - 2 * se_j, j_norms.mean(axis=1) + 2 * se_j,
                     color=COLORS["vermillion"], alpha=0.2, lw=0)
    ax2.set(xlabel=r"score scale $c$", ylabel=r"$\|J\|_F$")
    ax2.legend(loc="lower left")
    for ax in (ax1, ax2):
        for d_k in D_KS:
            ax.axvline(np.sqrt(d_k), color=COLORS["black"], ls=":", lw=1)
    for d_k in D_KS:
        ax1.text(np.sqrt(d_k), 1.04, f"{d_k}", ha="center", fontsize=8)
    fig.tight_layout()
    return fig


def plot_training(runs, steps):
    """Fig. 1.5: the mean loss (± 2 standard errors) and the median gradient norm over
    ``steps`` steps of each run of ``runs`` (a dict ``(d_k, scale) → train_query result``).

    >>> run = {"loss": np.ones((2, 3)), "grad_norm": np.ones((2, 3))}
    >>> fig = plot_training({(4, True): run}, 2); plt.close(fig)
    """
    d_ks = sorted({d_k for d_k, _ in runs})
    colors = (COLORS["blue"], COLORS["orange"], COLORS["green"], COLORS["vermillion"])
    palette = dict(zip(d_ks, colors, strict=False))
    x = np.arange(steps)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4.2))
    losses, norms = {}, {}
    for (d_k, scale), r in runs.items():
        style = {"color": palette[d_k], "ls": "-" if scale else "--", "lw": 1.4}
        label = rf"$d_k = {d_k}$, " + (r"$\div\sqrt{d_k}$" if scale else "raw")
        losses[label] = (r["loss"].mean(axis=1), style)
        norms[label] = (np.maximum(np.median(r["grad_norm"], axis=1), 1e-12), style)
        band = 2 * r["loss"].std(axis=1, ddof=1) / np.sqrt(r["loss"].shape[1])
        ax1.fill_between(x, r["loss"].mean(axis=1) - band, r["loss"].mean(axis=1) + band,
                         color=palette[d_k], alpha=0.25, lw=0)
    plot_curves(x, losses, ax=ax1, ylabel="mean loss")
    plot_curves(x, norms, ax=ax2, ylabel=r"median $\|\nabla_q L\|$", logy=True)
    fig.legend(*ax1.get_legend_handles_labels(), loc="upper center", ncol=4, fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.86))
    return fig


def plot_shapes(draws):
    """Fig. 1.6: scaled scores for each component distribution, one panel per ``d_k``;
    ``draws`` maps ``d_k`` to a dict ``distribution → scaled scores`` (``"coin"`` drawn as a
    lattice of bars whose heights are probabilities divided by the spacing ``2/√d_k``).

    >>> fig = plot_shapes({4: {"coin": np.array([-1.0, 1.0])}}); plt.close(fig)
    """
    fig, axes = plt.subplots(1, len(draws), figsize=(8, 3.2), sharey=True, squeeze=False)
    colors = dict(zip(("normal", "uniform", "coin"),
                      (COLORS["blue"], COLORS["orange"], COLORS["green"]), strict=True))
    for ax, (d_k, by_dist) in zip(axes[0], draws.items(), strict=True):
        for dist, s in by_dist.items():
            if dist == "coin":
                values, counts = np.unique(s, return_counts=True)  # a lattice, step 2/√d_k
                heights = counts / counts.sum() / (2 / np.sqrt(d_k))  # probability / step
                ax.vlines(values, 0, heights, color=colors[dist], lw=2, label=dist)
            else:
                histogram_with_errors(ax, s, np.linspace(-4, 4, 41), colors[dist], label=dist)
        plot_normal_density(ax=ax)
        ax.set(xlim=(-4, 4), xlabel=rf"$q\cdot k/\sqrt{{d_k}}$   ($d_k = {d_k}$)")
    axes[0, 0].set_ylabel("density")
    axes[0, 0].legend()
    fig.tight_layout()
    return fig
