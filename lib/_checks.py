"""Input validation shared by every module: clear ``ValueError`` messages, never silent NaNs."""

from __future__ import annotations

import numpy as np


def _nonempty_finite(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` itself if it has entries and all of them are finite, else ``ValueError``."""
    if arr.size == 0:
        raise ValueError(f"{name} is empty: shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _finite(x, name: str, ndim: int | None, what: str, dtype=float) -> np.ndarray:
    """``x`` as a float array of ``ndim`` dimensions (``None``: any but 0), non-empty, finite."""
    arr = np.asarray(x, dtype=dtype)
    if ndim is None and arr.ndim == 0:
        raise ValueError(f"{name} must be {what}, got a scalar")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {what}, got an array of shape {arr.shape}")
    return _nonempty_finite(arr, name)


def as_vector(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite, 1-D float array, or raise ``ValueError``."""
    return _finite(x, name, 1, "a 1-D vector")


def as_matrix(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite, 2-D float array, or raise ``ValueError``."""
    return _finite(x, name, 2, "a 2-D matrix")


def as_array(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite float array of at least one dimension."""
    return _finite(x, name, None, "an array with at least one dimension")


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


def _number(x, name: str, accept, what: str) -> float:
    """``x`` as a finite float for which ``accept(value)`` holds, else ``ValueError``."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        value = float("nan")
    if not np.isfinite(value) or not accept(value):
        raise ValueError(f"{name} must be {what}, got {x!r}")
    return value


def finite_float(x, name: str) -> float:
    """Return ``x`` as a float if it is a finite real number (of any sign), else raise
    ``ValueError`` saying which it is not."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {x!r}") from None
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return value


def positive_float(x, name: str) -> float:
    """Return ``x`` as a float if it is finite and > 0, else raise ``ValueError``."""
    return _number(x, name, lambda v: v > 0, "a positive number")


def require_generator(rng) -> np.random.Generator:
    """Raise ``ValueError`` unless ``rng`` is a ``numpy.random.Generator`` (explicit randomness)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "rng must be a numpy.random.Generator, e.g. np.random.default_rng(0); "
            f"got {type(rng).__name__}"
        )
    return rng


def tolerance(eps, name: str = "eps") -> float:
    """Return ``eps`` as a float in ``[0, 1)`` (a bound on ``|cos θ|``), else raise."""
    return _number(eps, name, lambda v: 0.0 <= v < 1.0, "a number in [0, 1)")


def non_negative_float(x, name: str) -> float:
    """Return ``x`` as a float if it is finite and >= 0, else raise ``ValueError``."""
    return _number(x, name, lambda v: v >= 0, "a non-negative number")


def nonzero_length(v: np.ndarray, name: str) -> float:
    """Return the length ``‖v‖`` of a vector, or raise ``ValueError`` if ``v`` is zero."""
    length = float(np.sqrt(v @ v))
    if length == 0.0:
        raise ValueError(f"{name} is the zero vector: it has no direction")
    return length


def plane_vector(v, name: str) -> np.ndarray:
    """Return ``v`` as a finite, non-zero float array of shape ``(2,)``, else raise."""
    arr = np.asarray(v, dtype=float)
    if arr.shape != (2,):
        raise ValueError(f"{name} must be a 2-D vector of shape (2,), got shape {arr.shape}")
    nonzero_length(_nonempty_finite(arr, name), name)
    return arr


def as_finite(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite float array of any dimension, scalars included."""
    return _nonempty_finite(np.asarray(x, dtype=float), name)


def as_float_matrix(x, name: str = "x") -> np.ndarray:
    """Like :func:`as_matrix`, but a float32 (or other floating) array keeps its type."""
    arr = np.asarray(x)
    if not np.issubdtype(arr.dtype, np.floating):
        if not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
            raise ValueError(f"{name} must hold numbers, got dtype {arr.dtype}")
        arr = arr.astype(np.float64)
    return _finite(arr, name, 2, "a 2-D matrix", dtype=arr.dtype)


def as_stack(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite, 3-D float array (a batch of matrices)."""
    return _finite(x, name, 3, "a 3-D array (a batch of matrices)")


def indices(i, n: int, name: str = "index") -> np.ndarray:
    """Return ``i`` as an integer array of entries in ``0 … n − 1``, or raise ``ValueError``."""
    arr = np.asarray(i)
    if arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"{name} must hold key indices in 0 … {n - 1}")
    return arr
