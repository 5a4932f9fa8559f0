"""Unit tests of lib.timing: the Q Kᵀ timers run in-process on a fixed number of BLAS threads."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from lib.timing import time_qk, time_qk_sweep


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_time_qk_is_positive_and_small():
    assert 0 < time_qk(16, 8, np.random.default_rng(0), repeat=2) < 1.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_time_qk_accepts_float_types(dtype):
    assert time_qk(8, 4, np.random.default_rng(0), repeat=1, min_time=0.0, dtype=dtype) > 0


def test_time_qk_sweep_times_every_shape_in_order():
    times = time_qk_sweep([(16, 8), (32, 8), (16, 4)], np.random.default_rng(3), repeat=2,
                          min_time=0.0)
    assert len(times) == 3
    assert all(0 < t < 1.0 for t in times)
    assert len(time_qk_sweep(((8, 2),), np.random.default_rng(0), threads=2, repeat=1,
                             min_time=0.0)) == 1


def test_thread_limit_is_restored_after_timing():
    before = _blas_threads()
    time_qk(32, 8, np.random.default_rng(0), repeat=1, min_time=0.0, threads=1)
    assert _blas_threads() == before


def test_time_qk_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="positive integer"):
        time_qk(0, 4, rng)
    with pytest.raises(ValueError, match="positive integer"):
        time_qk(4, 4, rng, repeat=0)
    with pytest.raises(ValueError, match="positive integer"):
        time_qk(4, 4, rng, threads=0)
    with pytest.raises(ValueError, match="Generator"):
        time_qk(4, 4, "seed")
    for bad in (-1.0, float("nan"), None):
        with pytest.raises(ValueError, match="min_time"):
            time_qk(4, 4, rng, min_time=bad)
    for bad in (np.int32, "text"):
        with pytest.raises(ValueError, match="floating-point"):
            time_qk(4, 4, rng, dtype=bad)


def test_time_qk_sweep_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="empty"):
        time_qk_sweep([], rng)
    with pytest.raises(ValueError, match="pair"):
        time_qk_sweep([(8, 4, 2)], rng)
    with pytest.raises(ValueError, match="positive integer"):
        time_qk_sweep([(0, 4)], rng)
    with pytest.raises(ValueError, match="positive integer"):
        time_qk_sweep([(8, 4)], rng, threads=0)
    with pytest.raises(ValueError, match="Generator"):
        time_qk_sweep([(8, 4)], 7)
    with pytest.raises(ValueError, match="min_time"):
        time_qk_sweep([(8, 4)], rng, min_time=float("inf"))


# -- one head, step by step, and the softmax past the cache -------------------------------------

def test_softmax_rows_is_the_softmax_in_place():
    from lib.timing import softmax_rows
    P = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    expected = np.exp(P - P.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    softmax_rows(P)
    np.testing.assert_allclose(P, expected, rtol=1e-6)


# Measured in a child process (tests.nbharness.json_from_child), where nothing else allocates.
MEASURE_HEAD_CHILD = """
import json, sys
import numpy as np
from lib.timing import measure_head
r = measure_head((16, 32), 8, np.random.default_rng(1))
json.dump({k: (v if k != "times" else {s: list(t) for s, t in v.items()}) for k, v in r.items()},
          sys.stdout)
"""


def test_measure_head_reports_every_step_and_the_memory_count():
    from lib.cost import attention_bytes
    from tests.nbharness import json_from_child

    r = json_from_child(MEASURE_HEAD_CHILD)
    assert set(r["times"]) == {"scores", "softmax", "weighted sum", "attention"}
    assert all(len(t) == 2 and min(t) > 0 for t in r["times"].values())
    for n, m in zip((16, 32), r["memory"], strict=False):
        assert 0 <= m - attention_bytes(n, n, 8, 8) < 0.2e6
    assert r["peak"] > 0 and r["softmax_ceiling"] > 0


def test_softmax_past_the_cache_takes_n_past_twice_the_cache_up_to_the_cap():
    from lib.timing import softmax_past_the_cache
    rng = np.random.default_rng(2)
    small = softmax_past_the_cache(rng, cache=2**20, n_max=4096)
    assert small["n"] == 4096 and small["past"] and small["bandwidth"] > 0
    capped = softmax_past_the_cache(rng, cache=2**40, n_max=4096)
    assert capped["n"] == 4096 and not capped["past"]


def test_last_level_cache_is_a_size_or_zero():
    from lib.timing import last_level_cache
    size = last_level_cache()
    assert size == 0 or size >= 2**16


def test_stream_bandwidth_is_positive_and_rejects_a_bad_size():
    from lib.timing import stream_bandwidth
    assert stream_bandwidth(np.random.default_rng(3), nbytes=2**20) > 0
    with pytest.raises(ValueError):
        stream_bandwidth(np.random.default_rng(3), nbytes=0)
