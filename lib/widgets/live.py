"""The live face's picture: a control's sprites in Jupyter, an anywidget."""

from __future__ import annotations

import functools
import importlib.resources
import math

from .params import MAX_PARAMS

__all__ = ["live_picture"]


@functools.cache
def _asset(name: str) -> str:
    """A script shipped with this package: ``sprite.js`` (the frame arithmetic both faces
    share), ``explorable.js`` (the site) or ``live.js`` (Jupyter)."""
    return importlib.resources.files(__package__).joinpath(name).read_text()


@functools.cache
def _live_picture_class():
    import anywidget
    import traitlets as T

    class LivePicture(anywidget.AnyWidget):
        """A control's frames in Jupyter: its sprites, their geometry and alt texts, the number
        of values of each parameter (``sizes``) and, in ``i0`` … ``i3``, the position of each
        input; ``live.js`` shows the frame they pick."""

        _esm = _asset("sprite.js") + _asset("live.js")
        sprites = T.List(T.Bytes()).tag(sync=True)
        geometry = T.Dict().tag(sync=True)
        alts = T.List(T.Unicode()).tag(sync=True)
        sizes = T.List(T.Int()).tag(sync=True)
        i0, i1, i2, i3 = (T.Int(0).tag(sync=True) for _ in range(MAX_PARAMS))

    return LivePicture


def live_picture(packed: dict, sizes, indices):
    """The live face's picture of a control, packed by :meth:`Control.packed`, showing the
    state ``indices`` (one per parameter, each below its entry of ``sizes``).

    In the browser, ``jslink`` from each input's ``index`` to ``i<n>`` moves it; no kernel is
    involved.

    >>> packed = {"sprites": [b"webp"], "geometry": {"count": 6}, "alts": list("abcdef")}
    >>> picture = live_picture(packed, [3, 2], [2, 1])
    >>> picture.sizes, picture.i0, picture.i1
    ([3, 2], 2, 1)
    >>> live_picture(packed, [4, 2], [0, 0])
    Traceback (most recent call last):
    ...
    ValueError: sizes [4, 2] make 8 states, but 6 frames are packed
    """
    sizes, indices = [int(s) for s in sizes], [int(i) for i in indices]
    if not 1 <= len(sizes) <= MAX_PARAMS or len(indices) != len(sizes):
        raise ValueError(f"need 1 to {MAX_PARAMS} sizes and one index each, got sizes {sizes} "
                         f"and indices {indices}")
    if not all(0 <= i < s for i, s in zip(indices, sizes, strict=True)):
        raise ValueError(f"indices {indices} out of range for sizes {sizes}")
    if math.prod(sizes) != packed["geometry"]["count"]:
        raise ValueError(f"sizes {sizes} make {math.prod(sizes)} states, but "
                         f"{packed['geometry']['count']} frames are packed")
    return _live_picture_class()(
        sprites=packed["sprites"], geometry=packed["geometry"], alts=packed["alts"],
        sizes=sizes, **{f"i{n}": i for n, i in enumerate(indices)})
