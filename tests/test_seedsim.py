"""The appendix simulation: the fast path prints the note's table digit for digit.

The full-N comparison runs the pure-Python reference once (about 7 s), in a child process
started right after collection: the issue requires the test suite to check both paths at the
note's N = 20000. Timing is measured by
``benchmarks/run.py``, never asserted here.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from lib import seedsim
from lib.seedsim import seed_report_fast, seed_report_reference
from tests.nbharness import json_from_child

#: The output printed in the lecture note (the end of the seed's appendix), verbatim.
NOTE_OUTPUT = """\
  d_k     mean       var     std  scaled var
    4   +0.008      4.00    2.00       1.000
   64   -0.006     63.73    7.98       0.996
  512   +0.018    516.07   22.72       1.008

   raw scores : [-1.04, -6.83, -7.02, 3.25, 8.74]
   raw softmax: [0.0, 0.0, 0.0, 0.004, 0.996]
   raw max p(1-p) = 0.0042

scaled scores : [-0.13, -0.85, -0.88, 0.41, 1.09]
scaled softmax: [0.142, 0.069, 0.067, 0.242, 0.481]
scaled max p(1-p) = 0.2496
"""


def test_the_chapter_shows_the_program_that_runs():
    """The appendix's listing is a literalinclude of the file seedsim runs: one copy."""
    chapter = seedsim.PROGRAM.parents[2] / "book" / "expectation-variance.md"
    chapter = chapter.read_text(encoding="utf-8")
    assert "```{literalinclude} ../lib/_seed/seed_note.py" in chapter
    assert seedsim.PROGRAM.parent.name == "_seed" and seedsim.PROGRAM.is_file()
    assert "random.seed(0)" not in chapter  # no second copy of the program in the prose


def test_fast_path_runs_the_programs_own_softmax_lines():
    """The softmax part of the fast report is the program's statements, on a private stream."""
    tail = seed_report_reference(1).split("\n\n", 1)[1]
    assert seedsim._softmax_lines() == "\n" + tail
    assert seed_report_fast(7).endswith(tail)


#: The pure-Python reference at the note's N, in a child process that ``tests/conftest.py``
#: starts right after collection (it is the slowest single computation of the suite).
REFERENCE_CHILD = """
import json, sys
from lib.seedsim import seed_report_reference
json.dump(seed_report_reference(20000), sys.stdout)
"""


@pytest.fixture(scope="module")
def reference_full():
    return json_from_child(REFERENCE_CHILD)


def test_reference_reproduces_the_note(reference_full):
    assert reference_full == NOTE_OUTPUT


def test_fast_equals_reference_at_full_n(reference_full):
    assert seed_report_fast(20000) == reference_full


def test_fast_path_needs_no_fallback_at_full_n(monkeypatch):
    """The equality above is the vectorised path's own: it never hands over to the reference."""

    def no_fallback(n):
        raise AssertionError("the fast path fell back to the reference")

    monkeypatch.setattr(seedsim, "seed_report_reference", no_fallback)
    assert seed_report_fast(20000) == NOTE_OUTPUT


def test_default_n_is_the_notes():
    assert seed_report_fast() == NOTE_OUTPUT


@pytest.mark.parametrize("n", [1, 2, 3, 10, 257, 1000])
def test_fast_equals_reference_at_small_n(n):
    assert seed_report_fast(n) == seed_report_reference(n)


def test_numpy_stream_is_pythons():
    """NumPy's MT19937, given Python's state after seed(0), draws the same 32-bit words."""
    bitgen = seedsim._numpy_mt19937(0)
    rnd = random.Random(0)
    assert bitgen.random_raw(2000).tolist() == [rnd.getrandbits(32) for _ in range(2000)]


def test_pair_products_follow_the_gauss_pairs():
    """Each vectorised product is the note's gauss() * gauss(), to rounding, in stream order."""
    m = 5000
    got = -2.0 * seedsim._Products(seedsim._numpy_mt19937(0), m).next(m)  # undo the -½
    rnd = random.Random(0)
    want = np.array([rnd.gauss(0, 1) * rnd.gauss(0, 1) for _ in range(m)])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_fast_path_leaves_the_global_random_state_alone():
    random.seed(12345)
    state = random.getstate()
    seed_report_fast(100)
    assert random.getstate() == state


def test_settled_detects_rounding_boundaries():
    assert seedsim._settled(0.9964, ".3f")
    assert not seedsim._settled(0.0015, ".3f")  # 0.0015 is on a boundary: ties could go either way
    assert not seedsim._settled(1e-12, "+.3f")  # the sign of a tiny mean is undecided
    assert seedsim._settled(0.0, ".2f", nonnegative=True)  # a variance cannot dip below zero


@pytest.mark.parametrize("func", [seed_report_reference, seed_report_fast])
@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "100", None])
def test_bad_n_is_rejected(func, bad):
    with pytest.raises(ValueError, match="n must be a positive integer"):
        func(bad)
