"""Variance through depth: initialization, normalization and the residual stream.

The variance of one linear layer and the initializations that keep it (:func:`layer_variance`,
:func:`init_variance`), the exact prediction for a stack of layers and its seeded simulation
forwards and backwards (:func:`stack_theory`, :func:`simulate_stack`), LayerNorm and RMSNorm
with their Jacobians (:func:`layer_norm`, :func:`rms_norm`, :func:`layer_norm_jacobian`,
:func:`rms_norm_jacobian`), and a residual stream with its normalization placed before, after
or nowhere (:func:`residual_stream`). The chapter *Variance through depth* derives them; each
docstring names its section.
"""

from __future__ import annotations

import numpy as np

from ._checks import (
    as_array,
    as_stack,
    as_vector,
    non_negative_float,
    positive_float,
    positive_int,
    require_generator,
)

__all__ = [
    "ACTIVATIONS",
    "INITS",
    "NORMS",
    "activation",
    "activation_factor",
    "init_variance",
    "layer_norm",
    "layer_norm_jacobian",
    "layer_variance",
    "residual_stream",
    "rms_norm",
    "rms_norm_jacobian",
    "simulate_stack",
    "stack_theory",
    "tanh_stack_theory",
]

#: Activations of :func:`activation`; only the first two have a closed-form factor.
ACTIVATIONS = ("linear", "relu", "tanh")
#: Initializations of :func:`init_variance`, by the variance of each weight.
INITS = ("fan_in", "fan_out", "glorot", "he")
#: Where :func:`residual_stream` puts the normalization.
NORMS = ("none", "pre", "post")


def _choice(value, options, name):
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def activation(z, name: str) -> np.ndarray:
    """The activation ``name`` applied elementwise: ``z``, ``max(z, 0)`` or ``tanh z``.

    >>> activation([-1.0, 2.0], "relu").tolist()
    [0.0, 2.0]
    """
    z = as_array(z, "z")
    name = _choice(name, ACTIVATIONS, "activation")
    if name == "relu":
        return np.maximum(z, 0.0)
    return np.tanh(z) if name == "tanh" else z


def activation_factor(name: str) -> float:
    """``c = E[φ(z)²] / Var(z)`` for a zero-mean symmetric ``z``; also ``E[φ'(z)²]``.

    .. math:: c_\\text{linear} = 1, \\qquad c_\\text{ReLU} = \\tfrac12

    (half of a symmetric ``z`` is zeroed, the other half kept). ``tanh`` has no such constant:
    its factor depends on ``Var(z)``, so it raises. Derived in {ref}`sec-depth-relu`.

    >>> activation_factor("relu")
    0.5
    """
    name = _choice(name, ACTIVATIONS, "activation")
    if name == "tanh":
        raise ValueError("tanh has no constant factor: E[tanh(z)²] / Var(z) depends on Var(z)")
    return 0.5 if name == "relu" else 1.0


def layer_variance(fan_in: int, sigma2: float, second_moment: float) -> float:
    """Variance of one output of ``y = W x`` with i.i.d. zero-mean weights of variance ``σ²``.

    .. math:: \\operatorname{Var}(y_i) = n_\\text{in}\\, \\sigma^2\\, \\mathbb{E}[x^2]

    (weights independent of the inputs; ``second_moment`` is ``E[x_j²]``, the same for every
    input). Derived in {ref}`sec-depth-one-layer`.

    >>> layer_variance(256, 1 / 256, 2.0)
    2.0
    """
    fan_in = positive_int(fan_in, "fan_in")
    return fan_in * non_negative_float(sigma2, "sigma2") * non_negative_float(
        second_moment, "second_moment")


def init_variance(fan_in: int, fan_out: int, init: str, gain: float = 1.0) -> float:
    """The weight variance ``σ²`` of an initialization, times ``gain``.

    .. math:: \\text{fan\\_in}: \\frac{1}{n_\\text{in}}, \\quad
              \\text{fan\\_out}: \\frac{1}{n_\\text{out}}, \\quad
              \\text{glorot}: \\frac{2}{n_\\text{in} + n_\\text{out}}, \\quad
              \\text{he}: \\frac{2}{n_\\text{in}}

    Derived in {ref}`sec-depth-backward` (Glorot) and {ref}`sec-depth-relu` (He).

    >>> init_variance(100, 300, "glorot")
    0.005
    """
    fan_in, fan_out = positive_int(fan_in, "fan_in"), positive_int(fan_out, "fan_out")
    base = {"fan_in": 1 / fan_in, "fan_out": 1 / fan_out, "glorot": 2 / (fan_in + fan_out),
            "he": 2 / fan_in}[_choice(init, INITS, "init")]
    return base * positive_float(gain, "gain")


def _widths(widths) -> list[int]:
    widths = [positive_int(n, "every width") for n in widths]
    if len(widths) < 2:
        raise ValueError("widths must list at least an input and an output width")
    return widths


def stack_theory(widths, init: str, act: str, gain: float = 1.0):
    """Predicted second moments through a stack ``h_l = φ(h_{l−1} W_l)``, forwards and backwards.

    .. math:: q_l = n_{l-1} \\sigma_l^2\\, c\\, q_{l-1}, \\qquad
              r_{l-1} = n_l \\sigma_l^2\\, c\\, r_l, \\qquad q_0 = r_L = 1

    ``q_l = E[h_l²]`` (``h_0 = x``), ``r_l = E[(∂L/∂h_l)²]`` and ``c`` is
    :func:`activation_factor`. ``widths`` = ``(n_0, …, n_L)``; returns two arrays of shape
    ``(L + 1,)``. Derived in {ref}`sec-depth-backward`.

    >>> q, r = stack_theory([4, 8, 2], "fan_in", "linear")
    >>> q.tolist(), r.tolist()
    ([1.0, 1.0, 1.0], [0.5, 0.25, 1.0])
    """
    widths = _widths(widths)
    c = activation_factor(act)
    q, r = [1.0], [1.0]
    for n_in, n_out in zip(widths[:-1], widths[1:], strict=True):
        q.append(q[-1] * n_in * init_variance(n_in, n_out, init, gain) * c)
    for n_in, n_out in zip(widths[-2::-1], widths[:0:-1], strict=True):
        r.append(r[-1] * n_out * init_variance(n_in, n_out, init, gain) * c)
    return np.array(q), np.array(r[::-1])


def tanh_stack_theory(gain: float, L: int, n_nodes: int = 101):
    """Second moments of an infinitely wide ``tanh`` stack, forwards and backwards.

    .. math:: q_l = \\mathbb{E}\\big[\\tanh\\big(\\sqrt{g\\, q_{l-1}}\\, Z\\big)^2\\big],
              \\qquad r_{l-1} = g\\, \\mathbb{E}\\big[\\tanh'\\big(\\sqrt{g\\, q_{l-1}}\\,
              Z\\big)^2\\big]\\, r_l, \\qquad q_0 = r_L = 1

    for a standard normal ``Z`` and the gain ``g = n σ²`` (``gain``); the expectations by
    Gauss–Hermite quadrature with ``n_nodes`` nodes. The backward recursion treats the weights
    as independent of the gradient arriving from above, as :func:`stack_theory` does. Returns
    ``(q, r)``, each of shape ``(L + 1,)``. Derived in {ref}`sec-depth-deeper-tanh`.

    >>> q, r = tanh_stack_theory(1.0, 2)
    >>> q.round(3).tolist(), r.round(3).tolist()
    ([1.0, 0.394, 0.236], [0.296, 0.637, 1.0])
    """
    gain = positive_float(gain, "gain")
    L, n_nodes = positive_int(L, "L"), positive_int(n_nodes, "n_nodes")
    nodes, weights = np.polynomial.hermite_e.hermegauss(n_nodes)
    weights = weights / weights.sum()  # E[f(Z)] ≈ Σ f(node) weight
    q, factors = [1.0], []
    for _ in range(L):
        t = np.tanh(np.sqrt(gain * q[-1]) * nodes)
        factors.append(gain * float(weights @ (1 - t**2) ** 2))  # g E[tanh'(z)²]
        q.append(float(weights @ t**2))
    r = np.cumprod([1.0, *factors[::-1]])[::-1]  # r_L = 1, then down through layers L..1
    return np.array(q), r


def simulate_stack(widths, init: str, act: str, rng: np.random.Generator, gain: float = 1.0,
                   n_nets: int = 20, batch: int = 16):
    """Seeded forward and backward pass through ``n_nets`` random stacks; second moments.

    Each network draws its own Gaussian weights ``W_l`` of shape ``(n_{l−1}, n_l)`` with
    variance :func:`init_variance`, and inputs ``x`` and output gradients ``∂L/∂h_L`` of
    ``batch`` rows with standard normal entries. Forwards ``z_l = h_{l−1} W_l``,
    ``h_l = φ(z_l)``; backwards ``∂L/∂h_{l−1} = (∂L/∂h_l ⊙ φ'(z_l)) W_lᵀ``. Returns
    ``(q, r)``, each of shape ``(n_nets, L + 1)``: per network, the mean of ``h_l²`` and of
    ``(∂L/∂h_l)²`` over its rows and units (average over axis 0 for the estimate; the spread
    over networks gives its standard error). Derived in {ref}`sec-depth-backward`.

    >>> q, r = simulate_stack([8, 8, 8], "he", "relu", np.random.default_rng(0), n_nets=2)
    >>> q.shape, r.shape
    ((2, 3), (2, 3))
    """
    widths = _widths(widths)
    act = _choice(act, ACTIVATIONS, "activation")
    rng = require_generator(rng)
    n_nets, batch = positive_int(n_nets, "n_nets"), positive_int(batch, "batch")
    h = rng.standard_normal((n_nets, batch, widths[0]))
    weights, slopes, q = [], [], [np.mean(h**2, axis=(1, 2))]
    for n_in, n_out in zip(widths[:-1], widths[1:], strict=True):
        sd = np.sqrt(init_variance(n_in, n_out, init, gain))
        W = sd * rng.standard_normal((n_nets, n_in, n_out))
        z = h @ W  # (n_nets, batch, n_out)
        h = activation(z, act)
        weights.append(W)
        slopes.append({"linear": np.ones_like(z), "relu": (z > 0).astype(float),
                       "tanh": 1.0 - h**2}[act])  # φ'(z)
        q.append(np.mean(h**2, axis=(1, 2)))
    g = rng.standard_normal(h.shape)  # ∂L/∂h_L
    r = [np.mean(g**2, axis=(1, 2))]
    for W, slope in zip(weights[::-1], slopes[::-1], strict=True):
        g = (g * slope) @ np.ascontiguousarray(np.swapaxes(W, 1, 2))  # ∂L/∂h_{l-1} (BLAS)
        r.append(np.mean(g**2, axis=(1, 2)))
    return np.stack(q, axis=1), np.stack(r[::-1], axis=1)


def _spread(x, name, eps):
    """Mean and centred standard deviation of the last axis; ``ValueError`` if it is zero."""
    eps = non_negative_float(eps, "eps")
    if x.shape[-1] < 2:
        raise ValueError(f"{name} needs at least 2 features on its last axis, got {x.shape[-1]}")
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    if eps == 0 and np.any(var == 0):
        raise ValueError(f"{name}: a row is constant, so it has no spread to divide by "
                         "(pass eps > 0)")
    return mean, np.sqrt(var + eps)


def _gain(gain, bias, d):
    g = np.ones(d) if gain is None else as_vector(gain, "gain")
    b = np.zeros(d) if bias is None else as_vector(bias, "bias")
    if g.size != d or b.size != d:
        raise ValueError(f"gain and bias must have length {d}, got {g.size} and {b.size}")
    return g, b


def layer_norm(x, gain=None, bias=None, eps: float = 0.0) -> np.ndarray:
    """LayerNorm of every row (last axis): standardize its features, then a gain and a bias.

    .. math:: \\operatorname{LN}(x)_i = \\gamma_i\\,
              \\frac{x_i - \\bar x}{\\sqrt{s^2 + \\varepsilon}} + b_i,
              \\qquad \\bar x = \\tfrac1d \\sum_j x_j, \\quad
              s^2 = \\tfrac1d \\sum_j (x_j - \\bar x)^2

    Any shape ``(..., d)``, ``d ≥ 2``; ``gain`` and ``bias`` of shape ``(d,)`` (default 1, 0).
    Derived in {ref}`sec-depth-norm`.

    >>> layer_norm([1.0, 3.0]).tolist()
    [-1.0, 1.0]
    """
    x = as_array(x, "x")
    mean, s = _spread(x, "layer_norm", eps)
    g, b = _gain(gain, bias, x.shape[-1])
    return g * (x - mean) / s + b


def rms_norm(x, gain=None, eps: float = 0.0) -> np.ndarray:
    """RMSNorm of every row (last axis): divide by its root mean square, then a gain.

    .. math:: \\operatorname{RMS}(x)_i = \\gamma_i\\, \\frac{x_i}{\\sqrt{\\tfrac1d \\sum_j x_j^2
              + \\varepsilon}}

    Any shape ``(..., d)``; ``gain`` of shape ``(d,)`` (default 1). Derived in
    {ref}`sec-depth-norm`.

    >>> rms_norm([3.0, -4.0]).round(4).tolist()
    [0.8485, -1.1314]
    """
    x = as_array(x, "x")
    eps = non_negative_float(eps, "eps")
    ms = np.mean(x**2, axis=-1, keepdims=True)
    if eps == 0 and np.any(ms == 0):
        raise ValueError("rms_norm: a row is the zero vector, so it has no scale to divide by "
                         "(pass eps > 0)")
    g, _ = _gain(gain, None, x.shape[-1])
    return g * x / np.sqrt(ms + eps)


def rms_norm_jacobian(x) -> np.ndarray:
    """Jacobian ``∂y/∂x`` of :func:`rms_norm` (gain 1, ``ε = 0``) at a non-zero vector ``x``.

    .. math:: J = \\frac{1}{\\operatorname{rms}(x)} \\Big(I - \\frac{x x^\\top}{\\lVert x
              \\rVert^2}\\Big), \\qquad \\operatorname{rms}(x) = \\lVert x \\rVert / \\sqrt d

    Shape ``(d, d)``. ``J x = 0``: the radial direction is projected out. Derived in
    {ref}`sec-depth-norm`.

    >>> rms_norm_jacobian([2.0, 0.0]).round(4).tolist()
    [[0.0, 0.0], [0.0, 0.7071]]
    """
    x = as_vector(x, "x")
    sq = float(x @ x)
    if sq == 0.0:
        raise ValueError("rms_norm_jacobian: x is the zero vector")
    rms = np.sqrt(sq / x.size)
    return (np.eye(x.size) - np.outer(x, x) / sq) / rms


def layer_norm_jacobian(x) -> np.ndarray:
    """Jacobian ``∂y/∂x`` of :func:`layer_norm` (gain 1, bias 0, ``ε = 0``) at ``x``.

    .. math:: J = \\frac{1}{s} \\Big(I - \\frac{1}{d} \\mathbf 1 \\mathbf 1^\\top
              - \\frac{1}{d}\\, y y^\\top\\Big), \\qquad y = \\operatorname{LN}(x)

    Shape ``(d, d)``; ``x`` must not be constant. Derived in {ref}`sec-depth-norm`.

    >>> J = layer_norm_jacobian([1.0, 2.0, 4.0])
    >>> J.shape, bool(np.abs(J @ np.ones(3)).max() < 1e-12)  # a shift of x changes nothing
    ((3, 3), True)
    """
    x = as_vector(x, "x")
    _, s = _spread(x, "layer_norm_jacobian", 0.0)
    y = layer_norm(x)
    d = x.size
    return (np.eye(d) - np.ones((d, d)) / d - np.outer(y, y) / d) / s[0]


def residual_stream(x0, weights, norm: str) -> np.ndarray:
    """The states ``x_0, …, x_L`` of a residual stream with linear branches ``f_l(h) = h W_l``.

    .. math::
        \\text{none: } x_{l+1} = x_l + x_l W_l, \\quad
        \\text{pre: } x_{l+1} = x_l + \\operatorname{RMS}(x_l)\\, W_l, \\quad
        \\text{post: } x_{l+1} = \\operatorname{RMS}(x_l + x_l W_l)

    ``x0`` of shape ``(n, d)`` (``n`` tokens), ``weights`` of shape ``(L, d, d)``; returns shape
    ``(L + 1, n, d)``. The normalization is :func:`rms_norm` with gain 1. Derived in
    {ref}`sec-depth-residual`.

    >>> residual_stream(np.ones((1, 2)), np.zeros((3, 2, 2)), "pre")[:, 0, 0].tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    x = as_array(x0, "x0")
    if x.ndim != 2:
        raise ValueError(f"x0 must be a 2-D array (tokens, features), got shape {x.shape}")
    weights = as_stack(weights, "weights")
    d = x.shape[1]
    if weights.shape[1:] != (d, d):
        raise ValueError(f"weights must have shape (L, {d}, {d}), got {weights.shape}")
    norm = _choice(norm, NORMS, "norm")
    states = [x]
    for W in weights:
        if norm == "pre":
            x = x + rms_norm(x) @ W
        elif norm == "post":
            x = rms_norm(x + x @ W)
        else:
            x = x + x @ W
        states.append(x)
    return np.stack(states)
