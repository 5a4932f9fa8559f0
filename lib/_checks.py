"""Input validation shared by every module: clear ``ValueError`` messages, never silent NaNs."""

from __future__ import annotations

import numpy as np


def as_vector(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite, 1-D float array, or raise ``ValueError``."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D vector, got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: it needs at least one component")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def as_matrix(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite, 2-D float array, or raise ``ValueError``."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def as_array(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite float array of at least one dimension."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array with at least one dimension, got a scalar")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def same_length(a: np.ndarray, b: np.ndarray, names: str = "a and b") -> None:
    """Raise ``ValueError`` unless the last axes of ``a`` and ``b`` have the same length."""
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"{names} must have the same dimension, got {a.shape[-1]} and {b.shape[-1]}"
        )


def positive_int(n, name: str) -> int:
    """Return ``n`` as an int if it is a positive integer, else raise ``ValueError``."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def positive_float(x, name: str) -> float:
    """Return ``x`` as a float if it is finite and > 0, else raise ``ValueError``."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {x!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {x!r}")
    return value


def generator(rng) -> np.random.Generator:
    """Raise ``ValueError`` unless ``rng`` is a ``numpy.random.Generator`` (explicit randomness)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "rng must be a numpy.random.Generator, e.g. np.random.default_rng(0); "
            f"got {type(rng).__name__}"
        )
    return rng
