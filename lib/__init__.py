"""Shared code of the executable notes on the mathematics of attention.

Small, flat modules by topic. The numerics are re-exported here, so chapters write
``lib.softmax(z)`` or ``from lib import softmax``; plotting and controls stay in their modules
(``lib.plotting.plot_histogram``, ``from lib.widgets import Control, Slider``).

Numerics (pure functions; a stochastic one takes an ``rng``):

* :mod:`lib.probability` – exact expectation, variance and covariance of finite distributions,
  seeded simulations of ``q · k``
* :mod:`lib.vectors` – dot products, norms, cosines, projections; random directions and
  near-orthogonality
* :mod:`lib.timing` – timers of ``Q Kᵀ`` on a fixed number of BLAS threads
* :mod:`lib.attention` – softmax, its Jacobian, the sigmoid, scaled dot-product attention
* :mod:`lib.masks` – causal, padding and sliding-window masks, the masked softmax
* :mod:`lib.training` – a batch of retrieval problems, their loss and gradient, gradient
  descent on the query
* :mod:`lib.seedsim` – the appendix simulation of the Expectation and Variance note, as
  published and vectorised (the same printed table)

Figures and controls:

* :mod:`lib.plotting` – the house style and ``plot_*`` helpers (``ax=None`` in, Axes out)
* :mod:`lib.widgets` – controls with live, static and explorable faces

Internal: ``lib._checks`` validates inputs for every module (clear ``ValueError`` messages).
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
    covariance,
    expectation,
    fair_die,
    independent_pair,
    sample_components,
    simulate_dot_products,
    variance,
)
from .seedsim import seed_report_fast, seed_report_reference
from .timing import time_qk, time_qk_sweep
from .training import make_retrieval_problems, retrieval_loss_and_grad, train_query
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
    vector_projection,
)

__all__ = [
    # lib.probability
    "COMPONENT_DISTRIBUTIONS", "covariance", "expectation", "fair_die", "independent_pair",
    "sample_components", "simulate_dot_products", "variance",
    # lib.vectors
    "angle", "cosine", "cosine_pdf", "cosine_tail", "dot", "greedy_packing", "norm",
    "packing_lower_bound", "random_cosines", "sample_cosines", "scalar_projection",
    "vector_projection",
    # lib.timing
    "time_qk", "time_qk_sweep",
    # lib.attention
    "attention", "attention_weights", "numerical_jacobian", "scores", "sigmoid",
    "sigmoid_slope", "softmax", "softmax_jacobian",
    # lib.masks
    "causal_mask", "masked_attention", "masked_softmax", "padding_mask", "sliding_window_mask",
    # lib.training
    "make_retrieval_problems", "retrieval_loss_and_grad", "train_query",
    # lib.seedsim
    "seed_report_fast", "seed_report_reference",
]
