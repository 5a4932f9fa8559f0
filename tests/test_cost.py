"""lib.cost and lib.measure: tiled against straightforward attention, the online softmax's
exactness, the FLOP and memory counts' closed forms, and clear errors; the chapter's own
derivations agree with lib."""

from __future__ import annotations

import contextlib
import io
import math
from fractions import Fraction
from pathlib import Path

import jupytext
import numpy as np
import pytest

import lib
from lib.attention import attention as reference_attention
from lib.attention import softmax
from lib.cost import (
    attention,
    attention_bytes,
    crossover_length,
    decode_flops,
    kv_cache_bytes,
    layer_flops,
    on_chip,
    online_normalizer,
    online_softmax,
    outer_block,
    pairwise_share,
    tiled_attention,
)
from lib.masks import causal_mask, sliding_window_mask
from lib.measure import best_time, loglog_slope
from tests.nbharness import json_from_child

CHAPTER = Path(__file__).resolve().parent.parent / "book" / "attention-cost.md"


def chapter_cell(tag: str) -> dict:
    """Run the chapter's code cell tagged ``tag``; return its namespace."""
    nb = jupytext.read(CHAPTER, fmt="md:myst")
    cells = [c.source for c in nb.cells
             if c.cell_type == "code" and tag in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}, found {len(cells)}"
    ns = {"np": np, "math": math, "lib": lib}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(cells[0], ns)
    return ns


def random_problem(rng, n_q, n_k, d_k, d_v, dtype=np.float64):
    Q = rng.uniform(0.1, 5.0) * rng.standard_normal((n_q, d_k))
    K = rng.standard_normal((n_k, d_k))
    V = rng.standard_normal((n_k, d_v))
    return tuple(x.astype(dtype) for x in (Q, K, V))


# -- straightforward attention ----------------------------------------------------------------

def test_straightforward_attention_matches_lib_attention():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n_q, n_k, d_k, d_v = (int(x) for x in rng.integers(1, 30, size=4))
        Q, K, V = random_problem(rng, n_q, n_k, d_k, d_v)
        np.testing.assert_allclose(attention(Q, K, V), reference_attention(Q, K, V),
                                   rtol=1e-12, atol=1e-14)


def test_a_mask_restricts_each_query_to_its_visible_keys():
    rng = np.random.default_rng(2)
    Q, K, V = random_problem(rng, 6, 9, 4, 3)
    mask = rng.random((6, 9)) < 0.5
    mask[:, 0] = True
    out = attention(Q, K, V, mask=mask)
    for i in range(6):
        visible = mask[i]
        np.testing.assert_allclose(out[i], reference_attention(Q[i:i + 1], K[visible],
                                                               V[visible])[0], rtol=1e-12)


def test_attention_keeps_float32():
    Q, K, V = random_problem(np.random.default_rng(3), 5, 7, 4, 2, np.float32)
    assert attention(Q, K, V).dtype == np.float32
    assert tiled_attention(Q, K, V, 2, 3).dtype == np.float32
    assert attention(np.ones((2, 2), int), np.ones((2, 2), int), np.ones((2, 1), int)).dtype \
        == np.float64


# -- tiled attention --------------------------------------------------------------------------

@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_tiled_equals_straightforward_for_many_random_shapes(causal):
    rng = np.random.default_rng(10 + causal)
    for _ in range(300):
        n_q = int(rng.integers(1, 80))
        n_k = n_q + int(rng.integers(0, 50)) if causal else int(rng.integers(1, 80))
        d_k, d_v = int(rng.integers(1, 20)), int(rng.integers(1, 20))
        b_q, b_k = int(rng.integers(1, 90)), int(rng.integers(1, 90))
        Q, K, V = random_problem(rng, n_q, n_k, d_k, d_v)
        mask = causal_mask(n_q, n_k) if causal else None
        np.testing.assert_allclose(tiled_attention(Q, K, V, b_q, b_k, causal=causal),
                                   attention(Q, K, V, mask=mask), rtol=0, atol=1e-12)


def test_tiled_handles_lengths_not_divisible_by_the_blocks_and_blocks_larger_than_n():
    rng = np.random.default_rng(12)
    Q, K, V = random_problem(rng, 1000, 1000, 16, 8)
    reference = attention(Q, K, V, mask=causal_mask(1000))
    for b_q, b_k in ((128, 128), (7, 33), (1000, 1), (4096, 4096)):
        np.testing.assert_allclose(tiled_attention(Q, K, V, b_q, b_k, causal=True), reference,
                                   atol=1e-12)


def test_tiled_float32_is_within_float32_rounding():
    rng = np.random.default_rng(13)
    Q, K, V = random_problem(rng, 300, 300, 64, 64)
    reference = attention(Q, K, V)
    out = tiled_attention(*(x.astype(np.float32) for x in (Q, K, V)), 64, 48)
    assert np.abs(out - reference).max() < 1e-5 * np.abs(V).max()


def test_causal_rows_see_only_earlier_keys():
    # Changing a later key or value must not change an earlier query's output.
    rng = np.random.default_rng(14)
    Q, K, V = random_problem(rng, 50, 50, 8, 4)
    out = tiled_attention(Q, K, V, 16, 16, causal=True)
    K2, V2 = K.copy(), V.copy()
    K2[30:], V2[30:] = 100.0, -100.0
    out2 = tiled_attention(Q, K2, V2, 16, 16, causal=True)
    np.testing.assert_array_equal(out[:30], out2[:30])
    assert not np.allclose(out[30:], out2[30:])


def test_one_new_query_with_causal_sees_every_key():
    rng = np.random.default_rng(15)
    Q, K, V = random_problem(rng, 1, 40, 8, 4)
    np.testing.assert_allclose(tiled_attention(Q, K, V, 1, 7, causal=True), attention(Q, K, V),
                               atol=1e-13)


def test_tiled_does_not_overflow_on_large_scores():
    Q = np.array([[1000.0, 0.0], [0.0, -1000.0]])
    K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    V = np.array([[1.0], [2.0], [3.0]])
    out = tiled_attention(Q, K, V, 1, 1)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, attention(Q, K, V), atol=1e-12)


# -- the online softmax -----------------------------------------------------------------------

def test_online_normalizer_equals_the_two_pass_normalizer():
    rng = np.random.default_rng(20)
    for scale in (0.1, 1.0, 30.0):
        z = scale * rng.standard_normal(2000)
        m_two, ell_two = z.max(), np.exp(z - z.max()).sum()
        for block in (1, 2, 17, 2000, 5000):
            m, ell = online_normalizer(z, block)
            assert m == m_two
            assert abs(ell - ell_two) / ell_two < 1e-13


def test_online_recursion_is_exact_in_rational_arithmetic():
    # With base 2 and integer scores every term is a fraction: no rounding at all.
    rng = np.random.default_rng(21)
    for _ in range(20):
        z = [int(x) for x in rng.integers(-60, 60, size=int(rng.integers(1, 200)))]
        m, ell = z[0], Fraction(1)
        for x in z[1:]:
            m_new = max(m, x)
            ell = ell * Fraction(2) ** (m - m_new) + Fraction(2) ** (x - m_new)
            m = m_new
        assert m == max(z)
        assert ell == sum(Fraction(2) ** (x - max(z)) for x in z)


def test_online_softmax_equals_softmax_and_does_not_overflow():
    rng = np.random.default_rng(22)
    z = 5 * rng.standard_normal(300)
    np.testing.assert_allclose(online_softmax(z, 7), softmax(z), rtol=1e-13)
    p = online_softmax([1000.0, 0.0, 1000.0])
    np.testing.assert_allclose(p, [0.5, 0.0, 0.5], atol=1e-300)


# -- the chapter derives the mechanisms in the open; lib's versions agree ---------------------

def test_chapter_online_normalizer_matches_lib():
    ns = chapter_cell("derive-online")
    z = 4 * np.random.default_rng(30).standard_normal(500)
    for block in (1, 3, 64):
        assert ns["online_normalizer"](z, block) == online_normalizer(z, block)


def test_chapter_tiled_attention_is_lib_tiled_attention():
    ns = chapter_cell("derive-tiled")
    rng = np.random.default_rng(32)
    for causal in (False, True):
        Q, K, V = random_problem(rng, 77, 90, 12, 6)
        np.testing.assert_array_equal(ns["tiled_attention"](Q, K, V, 16, 20, causal),
                                      tiled_attention(Q, K, V, 16, 20, causal=causal))


# -- counts: closed forms -----------------------------------------------------------------------

def test_layer_flops_closed_forms():
    n, d, h = 300, 64, 4
    f = layer_flops(n, d, h)
    assert f == {"projections": 8 * n * d * d, "scores": 2 * n * n * d, "softmax": 5 * h * n * n,
                 "weighted_sum": 2 * n * n * d, "mlp": 16 * n * d * d}
    fc = layer_flops(n, d, h, causal=True)
    assert fc["scores"] == 2 * d * n * (n + 1) // 2 == d * n * (n + 1)
    assert layer_flops(n, d, h, d_ff=100)["mlp"] == 4 * n * d * 100


def test_scores_count_is_the_matrix_product_count_of_every_head():
    n, d, h = 50, 24, 3
    d_k = d // h
    assert layer_flops(n, d, h)["scores"] == h * 2 * n * d_k * n


@pytest.mark.parametrize("against", ["projections", "layer"])
@pytest.mark.parametrize("causal", [False, True])
def test_crossover_length_solves_pairwise_equals_linear(against, causal):
    d, h = 768, 12
    n = crossover_length(d, h, against=against, causal=causal)
    pairs = n * (n + 1) / 2 if causal else n * n
    pairwise = (4 * d + 5 * h) * pairs
    linear = (8 * d * d + (16 * d * d if against == "layer" else 0)) * n
    assert pairwise == pytest.approx(linear, rel=1e-12)


def test_crossovers_are_about_2d_and_6d():
    for d, h in ((768, 12), (4096, 32), (12288, 96)):
        d_k = d // h
        assert crossover_length(d, h) == pytest.approx(2 * d / (1 + 5 / (4 * d_k)))
        assert crossover_length(d, h, against="layer") == pytest.approx(6 * d / (1 + 5 / (4 * d_k)))
        assert 1.95 * d < crossover_length(d, h) < 2 * d


def test_decoding_totals_match_their_closed_forms():
    d, h, T = 64, 4, 200
    c = 4 * d + 5 * h
    cached = sum(decode_flops(t, d, h) for t in range(1, T + 1))
    uncached = sum(decode_flops(t, d, h, cache=False) for t in range(1, T + 1))
    assert cached == 24 * d * d * T + c * T * (T + 1) // 2
    assert uncached == 12 * d * d * T * (T + 1) + c * T * (T + 1) * (T + 2) // 6
    assert cached == sum(layer_flops(T, d, h, causal=True).values())
    assert decode_flops(T, d, h, cache=False) == sum(layer_flops(T, d, h, causal=True).values())


def test_kv_cache_bytes():
    assert kv_cache_bytes(2048, 96, 12288) == 2 * 2048 * 96 * 12288 * 2
    assert kv_cache_bytes(0, 12, 768) == 0
    assert kv_cache_bytes(10, 2, 8, itemsize=4) == 2 * 10 * 2 * 8 * 4


def test_pairwise_share_is_layer_flops_share():
    for d, h, _layers, context in lib.cost.MODELS.values():
        for causal in (False, True):
            f = layer_flops(context, d, h, causal=causal)
            counted = (f["scores"] + f["softmax"] + f["weighted_sum"]) / sum(f.values())
            assert pairwise_share(context, d, h, causal=causal) == pytest.approx(counted,
                                                                                  rel=1e-12)
    shares = pairwise_share(np.array([1.0, 100.0, 1e4]), 768, 12)
    assert shares.shape == (3,) and np.all(np.diff(shares) > 0)


def test_outer_block_is_the_largest_that_fits_on_chip():
    assert on_chip(64, 128, 64) == 2 * 128 * 64 + 2 * 64 * 64 + 128 * 64
    for M, d_k in ((192 * 1024 // 2, 64), (20_000, 32), (4096, 16)):
        for equal in (False, True):
            b = outer_block(M, d_k, equal=equal)
            fits, next_fits = ((on_chip(d_k, outer, outer if equal else min(outer, d_k)) <= M)
                               for outer in (b, b + 1))
            assert fits and not next_fits


def test_the_chapters_cost_helpers_are_exported_by_lib():
    for name in ("pairwise_share", "on_chip", "outer_block"):
        assert name in lib.__all__ and getattr(lib, name) is getattr(lib.cost, name)


def test_masks():
    np.testing.assert_array_equal(causal_mask(2, 4), [[1, 1, 1, 0], [1, 1, 1, 1]])
    np.testing.assert_array_equal(sliding_window_mask(5, 5), causal_mask(5))
    assert sliding_window_mask(10, 3).sum() == 3 * 10 - 3 * 2 // 2


MEMORY_CASES = [(n, block, causal) for n, block in [(64, 128), (200, 64), (1000, 128)]
                for causal in (False, True)]
# Measured in a child process (tests.nbharness.json_from_child), where nothing else allocates.
PEAKS_CHILD = """
import json, sys
import numpy as np
from lib.cost import attention, tiled_attention
from lib.masks import causal_mask
from lib.measure import peak_bytes
from tests.test_cost import MEMORY_CASES, random_problem
out = []
for n, block, causal in MEMORY_CASES:
    Q, K, V = random_problem(np.random.default_rng(40), n, n, 32, 32, np.float32)
    mask = causal_mask(n) if causal else None
    out.append([peak_bytes(attention, Q, K, V, mask=mask),
                peak_bytes(tiled_attention, Q, K, V, block, block, causal=causal)])
json.dump({"cases": out, "ones": peak_bytes(np.ones, 10**6)}, sys.stdout)
"""


@pytest.fixture(scope="module")
def measured_peaks() -> dict:
    """``(n, block, causal)`` → peak bytes of straightforward and tiled attention, and
    ``"ones"`` → those of ``np.ones(10**6)``, measured in a process where nothing else
    allocates."""
    found = json_from_child(PEAKS_CHILD)
    return {**dict(zip(MEMORY_CASES, found["cases"], strict=True)), "ones": found["ones"]}


@pytest.mark.parametrize("n, block, causal", MEMORY_CASES)
def test_memory_counts_match_tracemalloc(measured_peaks, n, block, causal):
    straight, tiled = measured_peaks[n, block, causal]
    count_s = attention_bytes(n, n, 32, 32, masked=causal)
    count_t = attention_bytes(n, n, 32, 32, block_q=block, block_k=block, masked=causal)
    assert 0 <= straight - count_s < 0.2e6
    assert 0 <= tiled - count_t < 0.2e6


def test_tiled_working_set_does_not_grow_with_n():
    work = {attention_bytes(n, n, 64, 64, block_q=128, block_k=128) - 4 * n * 64
            for n in (128, 1000, 4096, 100_000)}
    assert len(work) == 1


# -- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("func", [attention, lambda Q, K, V: tiled_attention(Q, K, V, 2, 2)],
                         ids=["attention", "tiled"])
def test_shape_mismatches_and_bad_inputs_raise(func):
    Q, K, V = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))
    with pytest.raises(ValueError, match="same width"):
        func(Q, np.ones((5, 3)), V)
    with pytest.raises(ValueError, match="one row per key"):
        func(Q, K, np.ones((4, 2)))
    with pytest.raises(ValueError, match="empty"):
        func(np.ones((0, 4)), K, V)
    with pytest.raises(ValueError, match="empty"):
        func(Q, np.ones((0, 4)), np.ones((0, 2)))
    with pytest.raises(ValueError, match="2-D"):
        func(np.ones(4), K, V)
    with pytest.raises(ValueError, match="NaN"):
        func(np.full((3, 4), np.nan), K, V)
    with pytest.raises(ValueError, match="numbers"):
        func(np.array([["a"]]), K, V)


@pytest.mark.parametrize("block", [0, -3, 1.5, True, None])
def test_non_positive_or_non_integer_block_sizes_raise(block):
    Q = K = V = np.ones((4, 2))
    with pytest.raises(ValueError, match="block_q"):
        tiled_attention(Q, K, V, block, 2)
    with pytest.raises(ValueError, match="block_k"):
        tiled_attention(Q, K, V, 2, block)
    with pytest.raises(ValueError, match="block_size"):
        online_normalizer([1.0, 2.0], block)


def test_mask_errors():
    Q = K = V = np.ones((3, 2))
    with pytest.raises(ValueError, match="boolean array of shape"):
        attention(Q, K, V, mask=np.ones((3, 2), bool))
    with pytest.raises(ValueError, match="boolean array of shape"):
        attention(Q, K, V, mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match="at least one key"):
        attention(Q, K, V, mask=np.eye(3, dtype=bool) & np.array([True, True, False]))
    with pytest.raises(ValueError, match="n_q <= n_k"):
        tiled_attention(np.ones((4, 2)), np.ones((3, 2)), np.ones((3, 1)), 2, 2, causal=True)
    with pytest.raises(ValueError, match="N <= n_k"):
        causal_mask(4, 3)


def test_online_and_count_errors():
    with pytest.raises(ValueError, match="non-empty 1-D"):
        online_normalizer([])
    with pytest.raises(ValueError, match="non-empty 1-D"):
        online_softmax([[1.0]])
    with pytest.raises(ValueError, match="NaN"):
        online_normalizer([1.0, np.inf])
    with pytest.raises(ValueError, match="must divide"):
        layer_flops(10, 100, 7)
    with pytest.raises(ValueError, match="n_tokens"):
        layer_flops(0, 64, 4)
    with pytest.raises(ValueError, match="against"):
        crossover_length(64, 4, against="mlp")
    with pytest.raises(ValueError, match="t must"):
        decode_flops(0, 64, 4)
    with pytest.raises(ValueError, match="n_tokens"):
        kv_cache_bytes(-1, 2, 8)
    with pytest.raises(ValueError, match="both block sizes"):
        attention_bytes(10, 10, 4, 4, block_q=2)
    with pytest.raises(ValueError, match="w must be a positive integer"):
        sliding_window_mask(5, 0)


# -- lib.measure ------------------------------------------------------------------------------

def test_best_time_and_its_errors():
    assert best_time(sum, range(10), repeat=2) > 0
    with pytest.raises(ValueError, match="repeat"):
        best_time(sum, [1], repeat=0)
    with pytest.raises(ValueError, match="min_time"):
        best_time(sum, [1], min_time=-1)
    with pytest.raises(ValueError, match="threads"):
        best_time(sum, [1], threads=0)


def test_peak_bytes_sees_numpy_arrays(measured_peaks):
    assert 8e6 <= measured_peaks["ones"] < 8.1e6


def test_loglog_slope():
    n = np.array([1.0, 2.0, 4.0, 8.0])
    assert loglog_slope(n, 5 * n**2) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([1, 2], [0, 1])
    with pytest.raises(ValueError, match="two points"):
        loglog_slope([1], [1])
    with pytest.raises(ValueError, match="same length"):
        loglog_slope([1, 2], [1, 2, 3])


# -- the chapter's banded window and rounding bound -------------------------------------------

def test_chapter_banded_attention_equals_the_masked_window():
    ns = chapter_cell("derive-banded")
    rng = np.random.default_rng(50)
    for n, w, block in ((1, 1, 1), (37, 1, 8), (200, 16, 7), (300, 300, 64), (129, 500, 128)):
        Q, K, V = random_problem(rng, n, n, 8, 5)
        np.testing.assert_allclose(ns["banded_attention"](Q, K, V, w, block),
                                   attention(Q, K, V, mask=sliding_window_mask(n, w)),
                                   rtol=0, atol=1e-13 * np.abs(V).max())


@pytest.mark.parametrize("dtype, u", [(np.float64, 2.0**-53), (np.float32, 2.0**-24)])
def test_tiled_error_is_within_the_first_order_rounding_bound(dtype, u):
    # |ô − o| ≤ B u max|V| for each method, B = 2(d_k + 3) r + 6 n_k + 10 ({eq}`eq-cost-rounding`)
    rng = np.random.default_rng(51)
    for _ in range(30):
        n_q, n_k, d_k, d_v = (int(x) for x in rng.integers(1, 120, size=4))
        Q, K, V = random_problem(rng, n_q, n_k, d_k, d_v)
        r = (np.abs(Q) @ np.abs(K).T).max() / math.sqrt(d_k)
        bound = (2 * (d_k + 3) * r + 6 * n_k + 10) * u * np.abs(V).max()
        out = tiled_attention(*(x.astype(dtype) for x in (Q, K, V)), 16, 16)
        assert np.abs(out - attention(Q, K, V)).max() <= 2 * bound
