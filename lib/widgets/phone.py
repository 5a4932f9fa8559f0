"""Controls on a phone: the smallest legible size of a frame, and its cut into two pieces."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure  # noqa: F401  (used by the doctest)
from matplotlib.text import Text

__all__ = ["narrow_pieces", "smallest_text_px", "split_column"]

#: The smallest text height (CSS pixels) a frame may be shown at: on a narrow screen a frame
#: keeps at least the width at which its smallest text is this tall, and its box scrolls.
MIN_TEXT_PX = 9.0


def narrow_pieces(ink: np.ndarray, margin: int = 4) -> list[list[int]] | None:
    """How a narrow screen shows a control's frames: two pieces ``[x0, x1, y0, y1]`` (pixel
    columns and rows) cut at :func:`split_column` and trimmed to the rows drawn in them, with
    ``margin`` blank rows; None if the frames cannot be cut. ``ink`` is an ``(H, W)`` array,
    True where any frame is not white.

    >>> ink = np.zeros((40, 100), bool)
    >>> ink[2:38, 5:60] = ink[15:25, 75:95] = True  # a plot, its readout
    >>> narrow_pieces(ink)
    [[0, 67, 0, 40], [67, 100, 11, 29]]
    """
    frame = np.full(ink.shape[1:] + (3,), 255, np.uint8)[None]
    frame[:, ink.any(axis=0)] = 0
    split = split_column([frame])
    if split is None:
        return None
    pieces = []
    for x0, x1 in ((0, split), (split, ink.shape[1])):
        rows = np.flatnonzero(ink[:, x0:x1].any(axis=1))
        y0, y1 = max(0, rows[0] - margin), min(ink.shape[0], rows[-1] + 1 + margin)
        pieces.append([int(x0), int(x1), int(y0), int(y1)])
    return pieces


def split_column(frames, min_gap: int = 6) -> int | None:
    """A column at which every frame can be cut in two for a narrow screen: the middle of the
    widest band of columns that are white in every frame, with drawing on both sides, its
    middle in the central 30-85 % of the width (a plot and its readout, two panels); None if
    there is no such band.

    >>> frame = np.full((2, 20, 3), 255, np.uint8)
    >>> frame[:, :6] = frame[:, 14:] = 0
    >>> split_column([frame])
    10
    """
    white = None
    for f in frames:
        w = (f == 255).all(axis=(0, 2))
        white = w if white is None else white & w
    if white is None:
        return None
    width = len(white)
    drawn = np.flatnonzero(~white)
    if not len(drawn):
        return None
    best, at = None, 0
    for x in range(drawn[0], drawn[-1] + 1):  # runs of white columns inside the drawing
        if white[x] and (x == 0 or not white[x - 1]):
            end = x
            while end < width and white[end]:
                end += 1
            middle = (x + end) // 2
            if end - x >= min_gap and 0.3 * width <= middle <= 0.85 * width and \
                    (best is None or end - x > best):
                best, at = end - x, middle
    return at if best is not None else None


def smallest_text_px(fig) -> float:
    """The height in pixels of the smallest visible text of ``fig`` as saved (its dpi):
    ``points × dpi / 72``.

    >>> fig = Figure(dpi=100)
    >>> _ = fig.text(0.1, 0.1, "small", fontsize=9), fig.text(0.5, 0.5, "big", fontsize=12)
    >>> round(smallest_text_px(fig), 1)
    12.5
    """
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=10.0) * fig.dpi / 72
