"""Every state of a control drawn once, as arrays of pixels."""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["render_frames"]


def _frame_pixels(fig) -> np.ndarray:
    """The figure drawn on its canvas, as an ``(H, W, 3)`` array of bytes over white (what
    :meth:`Control.png` saves: the house style saves at the figure's own dpi, untrimmed)."""
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    rgb = rgba[..., :3].astype(np.uint16)
    alpha = rgba[..., 3:].astype(np.uint16)
    return ((rgb * alpha + 255 * (255 - alpha) + 127) // 255).astype(np.uint8)


def _state_key(indices) -> str:
    return ",".join(map(str, indices))


def _states(control):
    """Every state of ``control`` in order (the last parameter varies fastest), drawn:
    ``(key, pixels)`` pairs. The control is left at the values it had."""
    saved = dict(control.values)
    grids = [range(len(p.values)) for p in control.params]
    try:
        for combo in itertools.product(*grids):
            control.set(draw=False, **{p.name: p.values[i]
                                       for p, i in zip(control.params, combo, strict=True)})
            yield _state_key(combo), _frame_pixels(control.fig)
    finally:
        control.set(**saved)


def render_frames(control) -> dict[str, np.ndarray]:
    """Every state of ``control`` drawn once: ``{"i,j,...": pixels}``, one index per parameter
    into its ``values``, each frame an ``(H, W, 3)`` array of bytes. The control is left at
    the values it had.

    The frames are the explorable face's pictures (:func:`sprite` packs them); ``len`` is
    the product of the parameters' numbers of values, in order (the last varies fastest).

    >>> def setup(fig):
    ...     return {"line": fig.add_subplot().plot([0, 1], [0, 0])[0]}
    >>> def update(artists, y, dashed):
    ...     artists["line"].set_ydata([y, y])
    ...     artists["line"].set_linestyle("--" if dashed else "-")
    >>> from lib.widgets import Control, Slider, Toggle
    >>> control = Control(setup, update, [Slider("y", (0.0, 0.5, 1.0), 0.5), Toggle("dashed")],
    ...                   alt="a line at height {y}")
    >>> frames = render_frames(control)
    >>> list(frames), frames["2,1"].shape
    (['0,0', '0,1', '1,0', '1,1', '2,0', '2,1'], (360, 640, 3))
    >>> control.values
    {'y': 0.5, 'dashed': False}
    """
    return dict(_states(control))
