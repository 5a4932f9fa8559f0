"""The appendix simulation of the Expectation and Variance note, reproduced digit for digit.

The note's pure-Python program lives in one file, ``lib/_seed/seed_note.py`` (:data:`PROGRAM`),
verbatim; the chapter shows that file and this module runs it. :func:`seed_report_reference`
executes the whole program (``random.seed(0)``, ``N = 20000``, or another ``N``) and returns
what it prints. :func:`seed_report_fast` returns the same text with the table computed by a
vectorised path over the same Mersenne Twister stream, about 20 times faster
(``benchmarks/run.py --only seed`` measures both side by side), and the softmax lines by the
program's own statements. The comments above the fast path say how, and why its printed digits
are the reference's. Shown in {ref}`sec-ev-deeper-simulation`.
"""

from __future__ import annotations

import ast
import io
import math
import random
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np

from ._checks import positive_int

__all__ = ["D_KS", "PROGRAM", "seed_report_fast", "seed_report_reference"]

#: Dimensions of the table, as in the note.
D_KS = (4, 64, 512)

#: The note's program, verbatim (the chapter's appendix includes this file).
PROGRAM = Path(__file__).resolve().parent / "_seed" / "seed_note.py"


def _program(n: int) -> list[ast.stmt]:
    """The program's top-level statements, with its ``N = 20000`` set to ``N = n``."""
    body = ast.parse(PROGRAM.read_text(encoding="utf-8"), filename=str(PROGRAM)).body
    sizes = [s for s in body if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "N"]
    if len(sizes) != 1:
        raise RuntimeError(f"{PROGRAM.name} must assign N exactly once")
    sizes[0].value = ast.copy_location(ast.Constant(n), sizes[0].value)
    return body


def _run(statements: list[ast.stmt], namespace: dict) -> str:
    """Execute ``statements`` in ``namespace``; return what they print."""
    code = compile(ast.Module(body=statements, type_ignores=[]), str(PROGRAM), "exec")
    out = io.StringIO()
    with redirect_stdout(out):
        exec(code, namespace)
    return out.getvalue()


def seed_report_reference(n: int = 20000) -> str:
    """Run the note's pure-Python program (:data:`PROGRAM`) and return its printed output.

    The program runs as published, with ``N = n``; it uses (and reseeds) the global
    ``random`` module.

    >>> seed_report_reference(10).splitlines()[0].split()
    ['d_k', 'mean', 'var', 'std', 'scaled', 'var']
    """
    N = positive_int(n, "n")
    return _run(_program(N), {"__name__": "seed_note"})


def _softmax_lines() -> str:
    """The program's softmax part (after ``random.seed(1)``), run on a private generator.

    These are the program's own statements: its ``dot`` and everything from its ``softmax``
    on. Bound to a private ``random.Random`` under the name ``random``, they draw the same
    320 Box–Muller pairs without touching the global state.
    """
    body = _program(1)
    names = [getattr(s, "name", None) for s in body]
    part = [body[names.index("dot")], *body[names.index("softmax"):]]
    return _run(part, {"random": random.Random(), "math": math})


# -- the fast path ----------------------------------------------------------------------------
#
# Python's ``random`` is MT19937, the generator NumPy's ``MT19937`` bit generator implements, so
# after ``random.seed(0)`` the state (624 key words and a position) can be handed to NumPy and
# the same stream drawn in bulk. On it:
#
# * ``random()`` is ``((a >> 5) * 2**26 + (b >> 6)) / 2**53`` from two consecutive words ``a, b``,
#   and NumPy's ``Generator.random`` on an ``MT19937`` computes the same double from the same two
#   words (``mt19937_next_double``), so it returns Python's ``random()`` values, bitwise;
# * ``gauss()`` (CPython 3.11) is Box–Muller with a cached second value: from ``u1, u2`` it
#   returns ``cos(x) * g`` and caches ``sin(x) * g``, with ``x = u1 * 2π`` and
#   ``g = sqrt(-2 log(1 - u2))``. The note's product ``gauss() * gauss()`` is one such pair, so it
#   equals ``½ sin(2x) g² = -sin(2x) log(1 - u2)``: no square root, no cosine. And
#   ``sin(2x) = 2 t / (1 + t²)`` with ``t = tan(x)``: no sine either, which matters because
#   NumPy's float64 ``tan`` and ``log`` are vectorised (SIMD) and its ``sin`` is not, ten times
#   slower on this machine. ``x`` is bitwise the reference's ``x2pi`` and ``1 - u2`` is exact; the
#   formula is well conditioned everywhere (its relative condition number is at most 1), and ``t``
#   stays finite because no float ``x`` is exactly π/2 or 3π/2.
#
# Every dot product takes ``2d`` calls to ``gauss``, that is ``d`` whole pairs, so the cache is
# empty at every boundary, the pairs line up, and the reseed clears it anyway.
#
# The products differ from the reference's by a few units in the last place (another
# formula, NumPy's tangent and logarithm, pairwise summation), and the statistics are taken in
# float64 with ``math.fsum``, where ``statistics`` is exact. At N = 20000 the dot products differ
# from the reference's by at most 1.6e-13. Those differences cannot change a printed digit
# unless the exact figure lies within about 1e-11 of a rounding boundary, so each figure is
# checked against a far wider margin, ``_MARGIN``: if any figure is that close to a boundary,
# the float path cannot vouch for its last digit, and the exact reference is run instead.

#: Box–Muller pairs drawn per chunk (4 words each): small enough to stay in the CPU caches.
_CHUNK_PAIRS = 1 << 14

#: Relative distance to a rounding boundary below which a figure is recomputed exactly.
_MARGIN = 1e-9

_TWOPI = 2.0 * math.pi  # random.TWOPI


def _numpy_mt19937(seed):
    """A NumPy ``MT19937`` in the state ``random.seed(seed)`` leaves Python's generator in."""
    version, internal, gauss_next = random.Random(seed).getstate()
    if version != 3 or len(internal) != 625 or gauss_next is not None:
        raise RuntimeError("unexpected state layout of Python's random module")
    bitgen = np.random.MT19937()
    bitgen.state = {
        "bit_generator": "MT19937",
        "state": {"key": np.array(internal[:624], dtype=np.uint32), "pos": internal[624]},
    }
    return bitgen


class _Products:
    """``gauss() * gauss()`` for the next Box–Muller pairs of a stream, in chunks, times ``-½``.

    The factor ``-½`` (``t log(1 - u2) / (1 + t²)``) saves a pass; it is exact to undo, and the
    caller undoes it on the sums. Work arrays are allocated once and reused: allocating them
    afresh for every chunk makes the C allocator map and unmap pages each time, which costs as
    much as the arithmetic.
    """

    def __init__(self, bitgen, m):
        self.gen = np.random.Generator(bitgen)
        self.u = np.empty((m, 2))  # per pair: u1, u2
        self.den = np.empty(m)
        self.lg = np.empty(m)
        self.out = np.empty(m)

    def next(self, m):
        u, den, lg, t = self.u[:m], self.den[:m], self.lg[:m], self.out[:m]
        self.gen.random(out=u)  # random() of the stream, bitwise: see the comments above
        np.multiply(u[:, 0], _TWOPI, out=t)  # x2pi, bitwise
        np.tan(t, out=t)
        np.multiply(t, t, out=den)
        den += 1.0
        np.subtract(1.0, u[:, 1], out=lg)  # 1 - u2, exact
        np.log(lg, out=lg)
        t *= lg
        t /= den
        return t


def _dot_products(products, d, n):
    """The next ``n`` values of the note's ``dot(d)``, as a float64 array."""
    xs = np.empty(n)
    rows = max(1, _CHUNK_PAIRS // d)
    for start in range(0, n, rows):
        r = min(rows, n - start)
        np.sum(products.next(r * d).reshape(r, d), axis=1, out=xs[start:start + r])
    xs *= -2.0  # undo the factor -½ of the products: exact
    return xs


def _pvariance(xs):
    mean = math.fsum(xs) / len(xs)
    dev = xs - mean
    return math.fsum(dev * dev) / len(xs)


def _settled(value, spec, nonnegative=False):
    """True if every number within ``_MARGIN`` of ``value`` prints as ``value`` does."""
    delta = _MARGIN * max(1.0, abs(value))
    low = max(value - delta, 0.0) if nonnegative else value - delta
    return format(low, spec) == format(value, spec) == format(value + delta, spec)


def seed_report_fast(n: int = 20000) -> str:
    """The same printed output as :func:`seed_report_reference`, from a vectorised path.

    The table's ``3 × n`` dot products are drawn in bulk from the same Mersenne Twister stream;
    the five softmax scores after ``random.seed(1)`` (320 Box–Muller pairs) come from the
    program's own statements on a private generator (:func:`_softmax_lines`), which is exact
    and takes a fraction of a millisecond. Unlike the reference, this leaves the global
    ``random`` state untouched (except in the rare fallback described in the module's comments).

    >>> seed_report_fast(50) == seed_report_reference(50)
    True
    """
    N = positive_int(n, "n")
    products = _Products(_numpy_mt19937(0), max(_CHUNK_PAIRS, max(D_KS)))
    lines = [f"{'d_k':>5} {'mean':>8} {'var':>9} {'std':>7} {'scaled var':>11}"]
    for d in D_KS:
        xs = _dot_products(products, d, N)
        mean = math.fsum(xs) / N
        var = _pvariance(xs)
        std = math.sqrt(var)
        scaled_var = _pvariance(xs / math.sqrt(d))
        figures = ((mean, "+.3f", False), (var, ".2f", True), (std, ".2f", True),
                   (scaled_var, ".3f", True))
        if not all(_settled(*figure) for figure in figures):
            return seed_report_reference(N)
        lines.append(f"{d:>5} {mean:>+8.3f} {var:>9.2f} {std:>7.2f} {scaled_var:>11.3f}")
    return "\n".join(lines) + "\n" + _softmax_lines()
