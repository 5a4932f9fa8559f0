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
* :mod:`lib.position` – sinusoidal encodings, rotary embeddings (RoPE), ALiBi biases
* :mod:`lib.heads` – multi-head attention as a concatenation and as a sum over heads, QK and
  OV circuits, parameter counts, rank collapse of stacked attention
* :mod:`lib.masks` – causal, padding and sliding-window masks, the masked softmax
* :mod:`lib.cost` – FLOP and memory counts of a layer, online softmax, tiled attention
* :mod:`lib.measure` – best-of-several times on one BLAS thread, peak memory, log-log slopes
* :mod:`lib.training` – a batch of retrieval problems, their loss and gradient, gradient
  descent on the query
* :mod:`lib.depth` – variance through a stack of layers forwards and backwards, the
  initializations that keep it, LayerNorm and RMSNorm with their Jacobians, a residual stream
* :mod:`lib.seedsim` – the appendix simulation of the Expectation and Variance note, as
  published and vectorised (the same printed table)

Figures and controls:

* :mod:`lib.plotting` – the house style and ``plot_*`` helpers (``ax=None`` in, Axes out)
* :mod:`lib.widgets` – controls with live, static and explorable faces; ``lib.widgets.narrow``,
  a wide figure's narrow variant for phones (panels stacked), in its output
* :mod:`lib.figures` – each chapter's drawing code (one module a chapter), called by hidden cells

Internal: ``lib._checks`` validates inputs for every module (clear ``ValueError`` messages).
"""

import sys

from .attention import *  # noqa: F403
from .cost import *  # noqa: F403
from .depth import *  # noqa: F403
from .heads import *  # noqa: F403
from .masks import *  # noqa: F403
from .measure import *  # noqa: F403
from .position import *  # noqa: F403
from .probability import *  # noqa: F403
from .seedsim import *  # noqa: F403
from .timing import *  # noqa: F403
from .training import *  # noqa: F403
from .vectors import *  # noqa: F403

#: The numerics modules whose public names (each module's own ``__all__``) are re-exported.
NUMERICS = ("probability", "vectors", "timing", "attention", "position", "heads", "masks",
            "cost", "measure", "training", "seedsim", "depth")

__all__ = [name for module in NUMERICS for name in sys.modules[f"{__name__}.{module}"].__all__]
