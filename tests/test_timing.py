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
