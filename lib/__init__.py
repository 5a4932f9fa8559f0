"""Shared code of the executable notes on the mathematics of attention.

Small, flat modules by topic; chapters import from here::

    from lib import softmax, softmax_jacobian, cosine, simulate_dot_products

* :mod:`lib.probability` – exact expectation and variance, seeded simulations of q · k
* :mod:`lib.vectors` – dot products, norms, cosines, projections
* :mod:`lib.attention` – softmax, its Jacobian, scaled dot-product attention
* :mod:`lib.plotting` – the house style and ``plot_*`` helpers (``ax=None`` in, Axes out)
* :mod:`lib.widgets` – controls with live, static and explorable faces
* :mod:`lib.cost` – FLOP and memory counts of a layer, online softmax, tiled attention
* :mod:`lib.measure` – best-of-several times on one BLAS thread, peak memory, log-log slopes
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
from .cost import (
    attention_bytes,
    causal_mask,
    crossover_length,
    decode_flops,
    kv_cache_bytes,
    layer_flops,
    online_normalizer,
    online_softmax,
    tiled_attention,
    window_mask,
)
from .measure import best_time, loglog_slope, peak_bytes
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
    # lib.cost: the cost of attention (lib.cost.attention is the masked, in-place version)
    "attention_bytes",
    "causal_mask",
    "crossover_length",
    "decode_flops",
    "kv_cache_bytes",
    "layer_flops",
    "online_normalizer",
    "online_softmax",
    "tiled_attention",
    "window_mask",
    # lib.measure: times and peak memory on this machine
    "best_time",
    "loglog_slope",
    "peak_bytes",
]
