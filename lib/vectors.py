"""Dot products, norms, cosines and projections: the geometry behind attention scores."""

from __future__ import annotations

import numpy as np

from ._checks import as_vector, generator, positive_int, same_length


def dot(a, b) -> float:
    """Algebraic dot product, the sum of products of matching coordinates.

    .. math:: a \\cdot b = \\sum_i a_i b_i

    >>> dot([3, 4], [4, 3])
    24.0
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    return float(a @ b)


def norm(v) -> float:
    """Euclidean length ``|v| = √(v · v)``.

    >>> norm([3, 4])
    5.0
    """
    v = as_vector(v, "v")
    return float(np.sqrt(v @ v))


def _nonzero(v: np.ndarray, name: str) -> float:
    length = float(np.sqrt(v @ v))
    if length == 0.0:
        raise ValueError(f"{name} is the zero vector: it has no direction")
    return length


def cosine(a, b) -> float:
    """Cosine similarity, the dot product with both lengths divided out.

    .. math:: \\cos\\theta = \\frac{a \\cdot b}{|a|\\,|b|} \\in [-1, 1]

    Raises ``ValueError`` for a zero vector, whose direction is undefined.

    >>> cosine([1, 1], [5, 5])
    1.0
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    _nonzero(a, "a"), _nonzero(b, "b")
    c = float(a @ b) / float(np.sqrt(float(a @ a) * float(b @ b)))
    return float(np.clip(c, -1.0, 1.0))


def angle(a, b, degrees: bool = True) -> float:
    """Angle between two non-zero vectors, ``θ = arccos(cos θ)``, in degrees by default.

    >>> angle([1, 0], [0, 2])
    90.0
    """
    theta = float(np.arccos(cosine(a, b)))
    return float(np.degrees(theta)) if degrees else theta


def scalar_projection(a, b) -> float:
    """Signed length of the shadow of ``a`` on the line through ``b``.

    .. math:: \\operatorname{comp}_b a = \\frac{a \\cdot b}{|b|} = |a| \\cos\\theta

    >>> scalar_projection([3, 4], [4, 3])
    4.8
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    return float(a @ b) / _nonzero(b, "b")


def vector_projection(a, b) -> np.ndarray:
    """The shadow itself: the component of ``a`` along ``b``, ``(a·b / b·b) b``.

    >>> vector_projection([3, 4], [1, 0]).tolist()
    [3.0, 0.0]
    """
    a, b = as_vector(a, "a"), as_vector(b, "b")
    same_length(a, b)
    _nonzero(b, "b")
    return (float(a @ b) / float(b @ b)) * b


def random_cosines(d: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Cosines between ``n`` independent pairs of random vectors in ``d`` dimensions.

    Each vector has i.i.d. standard normal coordinates, so its direction is uniform on the
    sphere. The typical size of the cosine is ``1/√d``.

    >>> random_cosines(3, 2, np.random.default_rng(0)).shape
    (2,)
    """
    d, n = positive_int(d, "d"), positive_int(n, "n")
    if d < 2:
        raise ValueError("d must be at least 2: in one dimension every cosine is ±1")
    rng = generator(rng)
    a = rng.standard_normal((n, d))
    b = rng.standard_normal((n, d))
    c = np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.clip(c, -1.0, 1.0)
