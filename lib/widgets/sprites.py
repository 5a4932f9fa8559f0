"""Frames packed in sprites: many states of a control in one lossless WebP image.

Frame ``k`` of a sprite of frames ``H`` pixels high starts at row ``k (H + 2 pad) + pad``.
The arithmetic that finds a state's sprite and rows is written once for the browser, in
``sprite.js`` (:data:`SPRITE_JS`), which both faces load (``explorable.js`` on the site,
``live.js`` in Jupyter); :func:`sprite_rows` is its Python twin, for the first paint of the
page before any script runs, and ``tests/test_browser.py`` checks that the two agree.
"""

from __future__ import annotations

import io

import numpy as np

__all__ = ["frames_per_sprite", "sprite", "sprite_rows"]


#: Rows each frame of a sprite repeats of its own top and bottom edge, above and below it: a
#: browser that scales the sprite samples a little beyond a frame's edge, and finds its own
#: pixels there, never the neighbouring frame's.
SPRITE_PAD = 2
#: The most pixels one sprite holds (decoded, 4 bytes each: 32 MB), and WebP's largest side.
SPRITE_MAX_PIXELS = 8_000_000
WEBP_MAX_SIDE = 16383
#: Colours of a sprite's shared palette (the figures are flat colours and anti-aliased edges).
SPRITE_COLORS = 64
#: libwebp's lossless effort, ``method`` 0-6 and ``quality`` 0-100. Quality 100 searches back
#: far enough to reach the same pixels one frame up (the shadow control's first sprite of 20
#: frames, 720 × 6480: 25 KB at method 3, 0.2 s; 100 KB at quality 50-75; 25 KB but 5.9 s at
#: method 6; 143 KB as 20 palette PNGs).
WEBP_OPTIONS = {"lossless": True, "method": 3, "quality": 100}


def frames_per_sprite(height: int, width: int, pad: int = SPRITE_PAD) -> int:
    """How many frames of ``height × width`` pixels one sprite holds: at most
    :data:`SPRITE_MAX_PIXELS` pixels and :data:`WEBP_MAX_SIDE` rows, each frame taking
    ``height + 2 pad`` rows.

    >>> frames_per_sprite(320, 720)  # 34 × 324 × 720 × 4 bytes: 32 MB decoded
    34
    """
    if height < 1 or width < 1:
        raise ValueError(f"a frame needs at least one pixel, got {height} × {width}")
    slot = height + 2 * pad
    return max(1, min(SPRITE_MAX_PIXELS // (slot * width), WEBP_MAX_SIDE // slot))


def sprite(frames, pad: int = SPRITE_PAD) -> bytes:
    """Frames stacked top to bottom in one lossless WebP with a shared palette of
    :data:`SPRITE_COLORS` colours; each frame repeats its top and bottom row ``pad`` times
    above and below it, so frame ``k`` starts at row ``k (H + 2 pad) + pad``.

    ``frames`` are ``(H, W, 3)`` arrays of bytes, all of one shape.

    >>> from PIL import Image
    >>> red, blue = np.zeros((4, 6, 3), np.uint8), np.zeros((4, 6, 3), np.uint8)
    >>> red[..., 0], blue[..., 2] = 255, 255
    >>> img = Image.open(io.BytesIO(sprite([red, blue], pad=1)))
    >>> img.format, img.size, img.getpixel((0, 0)), img.getpixel((0, 7))
    ('WEBP', (6, 12), (255, 0, 0), (0, 0, 255))
    """
    from PIL import Image

    frames = list(frames)
    if not frames:
        raise ValueError("a sprite needs at least one frame")
    shapes = {f.shape for f in frames}
    if len(shapes) != 1 or len(frames[0].shape) != 3 or frames[0].shape[2] != 3:
        raise ValueError(f"frames must be (H, W, 3) arrays of one shape, got {sorted(shapes)}")
    stacked = np.concatenate([np.pad(f, ((pad, pad), (0, 0), (0, 0)), mode="edge")
                              for f in frames])
    img = Image.fromarray(stacked, "RGB").quantize(
        colors=SPRITE_COLORS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    img.save(out, format="webp", **WEBP_OPTIONS)
    return out.getvalue()


def sprite_rows(geometry: dict, frame: int) -> tuple[int, int]:
    """Where state ``frame`` lies in the sprite that holds it: ``(first row, sprite height)``
    in pixels. Slot ``k`` of a sprite of ``m`` frames starts at row ``k (H + 2 pad) + pad``
    of ``m (H + 2 pad)``. The ``<img>`` of the sprite is moved up by ``first / height`` of its
    own height (``translateY``: exact at any scale, unlike an offset in box heights).

    >>> sprite_rows({"height": 10, "pad": 1, "perSprite": 3, "count": 4}, 1)
    (13, 36)
    >>> sprite_rows({"height": 10, "pad": 1, "perSprite": 3, "count": 4}, 3)  # a new sprite
    (1, 12)
    """
    height, pad, per = geometry["height"], geometry["pad"], geometry["perSprite"]
    slot, first = height + 2 * pad, frame - frame % per
    return (frame - first) * slot + pad, min(per, geometry["count"] - first) * slot
