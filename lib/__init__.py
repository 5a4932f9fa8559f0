"""Shared code of the executable notes on the mathematics of attention.

Small, flat modules by topic; chapters import from here::

    from lib import softmax, softmax_jacobian, cosine, simulate_dot_products

* :mod:`lib.probability` – exact expectation and variance, seeded simulations of q · k
* :mod:`lib.vectors` – dot products, norms, cosines, projections
* :mod:`lib.attention` – softmax, its Jacobian, scaled dot-product attention
* :mod:`lib.masks` – causal, padding and sliding-window masks, the masked softmax
* :mod:`lib.plotting` – the house style and ``plot_*`` helpers (``ax=None`` in, Axes out)
* :mod:`lib.widgets` – controls with live, static and explorable faces
"""

from .attention import (
    attention,
    attention_weights,
    numerical_jacobian,
    scores,
    sigmoid,
    sigmoid_slope,
    softmax,
    softmax_jacobian,
)
from .masks import (
    causal_mask,
    masked_attention,
    masked_softmax,
    padding_mask,
    sliding_window_mask,
)
from .probability import (
    COMPONENT_DISTRIBUTIONS,
    expectation,
    fair_die,
    sample_components,
    simulate_dot_products,
    variance,
)
from .vectors import (
    angle,
    cosine,
    cosine_pdf,
    cosine_tail,
    dot,
    greedy_packing,
    norm,
    packing_lower_bound,
    random_cosines,
    sample_cosines,
    scalar_projection,
    time_qk,
    vector_projection,
)

__all__ = [
    "COMPONENT_DISTRIBUTIONS",
    "angle",
    "attention",
    "attention_weights",
    "cosine",
    "dot",
    "expectation",
    "fair_die",
    "norm",
    "numerical_jacobian",
    "random_cosines",
    "sample_components",
    "scalar_projection",
    "scores",
    "sigmoid",
    "sigmoid_slope",
    "simulate_dot_products",
    "softmax",
    "softmax_jacobian",
    "variance",
    "vector_projection",
    # lib.vectors: random directions and near-orthogonality
    "cosine_pdf",
    "cosine_tail",
    "greedy_packing",
    "packing_lower_bound",
    "sample_cosines",
    "time_qk",
    # lib.masks: attention masks
    "causal_mask",
    "masked_attention",
    "masked_softmax",
    "padding_mask",
    "sliding_window_mask",
]
