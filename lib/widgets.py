"""Interactive controls with three faces: live, static, and explorable without a kernel.

A control is a figure driven by a few named parameters. The chapter supplies two pure
functions: ``setup(fig)`` draws the figure once and returns its artists, and
``update(artists, **values)`` recomputes and moves them. This module only wires them:

* **live** (Jupyter, Binder): ipywidgets inputs above a picture that holds every state's
  frame (the same sprites as the site's, drawn when the cell runs); each input's ``index`` is
  linked to the picture in the browser (``jslink``; ``live.js``, an anywidget), so a move shows
  its frame with no round trip to the kernel;
* **static** (PDF, any viewer without HTML): the figure at the default values, as a PNG;
* **explorable** (the website, no kernel, no network): every combination of a small grid of
  parameter values is drawn once, ahead of time, the frames stacked in a few lossless WebP
  sprites (:func:`sprite`), and a short script (``explorable.js``, shipped with this package)
  moves the sprite in its one-frame window as the reader moves the HTML inputs; on a narrow
  screen it shows the frame in two stacked pieces (:func:`narrow_pieces`).

Each parameter class (:class:`Slider`, :class:`Toggle`, :class:`Choice`) builds its own live
widget and its own HTML input; :func:`render_frames` draws every state in one place. All three
faces travel in one display bundle; each front end shows the face it can render (the site is
told to prefer ``text/html`` over the widget view in ``_config.yml``).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import html
import importlib.resources
import io
import itertools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from .plotting import use_house_style

__all__ = ["Choice", "Control", "Slider", "Toggle", "folded_output", "render_frames", "sprite"]

#: The most parameters a control takes (the live face links each to one of its picture's
#: ``i0`` … ``i3``; and every combination of their values is drawn).
MAX_PARAMS = 4

#: The smallest text height (CSS pixels) a frame may be shown at: on a narrow screen a frame
#: keeps at least the width at which its smallest text is this tall, and its box scrolls.
MIN_TEXT_PX = 9.0


@contextlib.contextmanager
def folded_output(summary: str = "What the solution prints"):
    """Show what the block prints folded, under ``summary``, opened on request.

    For the cell of an exercise's solution: JupyterLab's Run All shows the outputs of every
    cell it runs, collapsed or not, which would print the answer under the closed solution.
    The output is a ``<details>`` element (``text/html``; its summary keeps the disclosure
    triangle, which JupyterLab's styles remove) and the printed text (``text/plain``,
    for other front ends and the print edition). The site opens it, since there the whole cell
    is already behind a toggle. If the block raises, what it printed is printed as usual;
    outside IPython (a plain ``python``), it is printed as usual too:

    >>> with folded_output():
    ...     print("cos θ = 0.302")
    cos θ = 0.302
    """
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            yield
    except BaseException:
        print(buf.getvalue(), end="")
        raise
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display

    text = buf.getvalue()
    if not InteractiveShell.initialized():
        print(text, end="")
        return
    display({"text/plain": text,
             "text/html": f'<details class="folded-output"><summary style="display:list-item;'
                          f'list-style:revert;cursor:pointer">{html.escape(summary)}</summary>'
                          f"<pre>{html.escape(text)}</pre></details>"}, raw=True)


def _describe(param) -> str:
    return html.escape(param.label or param.name)


@dataclass(frozen=True)
class Slider:
    """A numeric parameter: a live slider over ``[min, max]`` and a list of explorable values.

    ``values`` are the states precomputed for the site; ``default`` must be one of them.
    The live slider is bounded, so it cannot be driven out of ``[min, max]``.
    """

    name: str
    values: tuple
    default: Any
    label: str = ""
    integer: bool = False
    fmt: str = "{}"

    def __post_init__(self):
        values = tuple(self.values)
        if not values:
            raise ValueError(f"slider {self.name!r} needs at least one value")
        if any(not np.isfinite(v) for v in values):
            raise ValueError(f"slider {self.name!r} has non-finite values")
        if list(values) != sorted(values):
            raise ValueError(f"slider {self.name!r}: values must be increasing")
        if self.default not in values:
            raise ValueError(
                f"slider {self.name!r}: default {self.default!r} is not one of its values"
            )
        object.__setattr__(self, "values", values)

    @property
    def min(self):
        return self.values[0]

    @property
    def max(self):
        return self.values[-1]

    def validate(self, value):
        if not (self.min <= value <= self.max):
            raise ValueError(
                f"{self.name} must lie in [{self.min}, {self.max}], got {value!r}"
            )
        return int(value) if self.integer else float(value)

    def live_widget(self):
        """An ipywidgets selection slider over ``values`` (it cannot leave them), showing each
        as ``fmt`` writes it; its ``index`` picks the frame, as the site's range input does."""
        import ipywidgets as W

        return W.SelectionSlider(
            options=[(self.fmt.format(v), v) for v in self.values], value=self.default,
            continuous_update=True, description=self.label or self.name,
            style={"description_width": "initial"})

    def html_input(self, uid: str, index: int, value) -> str:
        """A range input over the explorable values' positions, with its value beside it."""
        at = self.values.index(value)
        shown = html.escape(self.fmt.format(self.values[at]))
        return (
            f'<label for="{uid}">{_describe(self)}</label>'
            f'<input type="range" id="{uid}" min="0" max="{len(self.values) - 1}" step="1" '
            f'value="{at}" data-param="{index}" aria-valuetext="{shown}">'
            f'<output for="{uid}">{shown}</output>'
        )


@dataclass(frozen=True)
class Toggle:
    """A yes/no parameter (a checkbox)."""

    name: str
    default: bool = False
    label: str = ""
    fmt: str = field(default="{}", repr=False)

    @property
    def values(self):
        return (False, True)

    def validate(self, value):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{self.name} must be True or False, got {value!r}")
        return bool(value)

    def live_widget(self):
        """Two ipywidgets toggle buttons, "off" and "on" (a checkbox has no ``index`` for the
        browser to pick the frame with)."""
        import ipywidgets as W

        return W.ToggleButtons(options=[("off", False), ("on", True)], value=self.default,
                               description=self.label or self.name,
                               style={"description_width": "initial", "button_width": "auto"})

    def html_input(self, uid: str, index: int, value) -> str:
        """A checkbox, its label after it."""
        checked = " checked" if value else ""
        return (f'<input type="checkbox" id="{uid}" data-param="{index}"{checked}>'
                f'<label for="{uid}">{_describe(self)}</label>')


@dataclass(frozen=True)
class Choice:
    """A parameter chosen from a few named options (a drop-down list)."""

    name: str
    values: tuple
    default: Any
    label: str = ""
    fmt: str = "{}"

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(self.values))
        if self.default not in self.values:
            raise ValueError(f"choice {self.name!r}: default {self.default!r} is not an option")

    def validate(self, value):
        if value not in self.values:
            raise ValueError(f"{self.name} must be one of {self.values}, got {value!r}")
        return value

    def live_widget(self):
        """A row of ipywidgets toggle buttons, one per option.

        Not a drop-down: in JupyterLab a focused drop-down loses its arrow and digit keys to
        the notebook's shortcuts (the next cell, a Markdown heading); buttons take Tab and Space.
        """
        import ipywidgets as W

        return W.ToggleButtons(options=list(self.values), value=self.default,
                               description=self.label or self.name,
                               style={"description_width": "initial"})

    def html_input(self, uid: str, index: int, value) -> str:
        """A drop-down list of the options, as their shown values."""
        at = self.values.index(value)
        options = "".join(
            f'<option value="{j}"{" selected" if j == at else ""}>'
            f"{html.escape(self.fmt.format(v))}</option>"
            for j, v in enumerate(self.values)
        )
        return (f'<label for="{uid}">{_describe(self)}</label>'
                f'<select id="{uid}" data-param="{index}">{options}</select>')


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
    >>> control = Control(setup, update, [Slider("y", (0.0, 0.5, 1.0), 0.5), Toggle("dashed")],
    ...                   alt="a line at height {y}")
    >>> frames = render_frames(control)
    >>> list(frames), frames["2,1"].shape
    (['0,0', '0,1', '1,0', '1,1', '2,0', '2,1'], (360, 640, 3))
    >>> control.values
    {'y': 0.5, 'dashed': False}
    """
    return dict(_states(control))


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


@functools.cache
def _asset(name: str) -> str:
    """A script shipped with this package: ``explorable.js`` (the site) or ``live.js``."""
    return importlib.resources.files(__package__).joinpath(name).read_text()


@functools.cache
def _live_picture_class():
    import anywidget
    import traitlets as T

    class LivePicture(anywidget.AnyWidget):
        """A control's frames in Jupyter: its sprites, their geometry and alt texts, the number
        of values of each parameter (``sizes``) and, in ``i0`` … ``i3``, the position of each
        input; ``live.js`` shows the frame they pick."""

        _esm = _asset("live.js")
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


class Control:
    """A figure driven by parameters, displayed with its live, static and explorable faces.

    Parameters
    ----------
    setup : callable ``setup(fig) -> artists``
        Draws the figure once and returns whatever ``update`` needs (usually a dict of artists).
    update : callable ``update(artists, **values) -> None``
        Recomputes and redraws for the given parameter values.
    params : list of :class:`Slider`, :class:`Toggle`, :class:`Choice`
    alt : str
        Alt text of the figure, with ``{name}`` fields filled in with the current values.
    figsize : tuple
        Figure size in inches.
    """

    def __init__(self, setup: Callable, update: Callable, params, alt: str, figsize=(6.4, 3.6)):
        params = list(params)
        if not params:
            raise ValueError("a control needs at least one parameter")
        if len(params) > MAX_PARAMS:
            raise ValueError(f"a control takes at most {MAX_PARAMS} parameters, got "
                             f"{len(params)} (every combination of values is drawn)")
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError(f"parameter names must be unique, got {names}")
        if not alt or not alt.strip():
            raise ValueError("alt text is required: describe what the figure shows")
        self.params = params
        self.alt = alt
        use_house_style()
        # A figure outside pyplot: the inline backend never shows it a second time.
        self.fig = Figure(figsize=figsize)
        FigureCanvasAgg(self.fig)
        self.artists = setup(self.fig)
        self._update = update
        self.values = {p.name: p.default for p in params}
        self.set(**self.values)
        # Freeze the layout found at the defaults: otherwise a layout engine left by setup
        # (tight_layout leaves one behind) lays the whole figure out again at every frame.
        self.fig.set_layout_engine(None)
        self._widget = None
        self._packed = None

    # -- numerics -------------------------------------------------------------------------
    def set(self, draw: bool = True, **values) -> None:
        """Validate ``values``, update the figure and redraw it to the Agg canvas.

        ``draw=False`` skips the redraw, for callers that render a PNG next (which draws).
        """
        unknown = set(values) - set(self.values)
        if unknown:
            raise ValueError(f"unknown parameters {sorted(unknown)}; known: {list(self.values)}")
        by_name = {p.name: p for p in self.params}
        for name, value in values.items():
            self.values[name] = by_name[name].validate(value)
        self._update(self.artists, **self.values)
        if draw:
            self.fig.canvas.draw()

    def png(self) -> bytes:
        """The figure as it stands, as PNG bytes."""
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png")
        return buf.getvalue()

    def alt_text(self, values=None) -> str:
        return self.alt.format(**(values or self.values))

    def packed(self) -> dict:
        """Every state drawn once and packed in sprites, kept for both faces that show them:
        ``sprites`` (WebP bytes, :func:`frames_per_sprite` frames each, in state order),
        ``keys`` (each state's ``"i,j,..."``), ``alts`` (its alt text), ``geometry`` (what
        :func:`sprite_rows` and ``explorable.js`` need) and ``digest`` (of the pixels)."""
        if self._packed is not None:
            return self._packed
        sprites, chunk, keys, digest = [], [], [], hashlib.sha1()
        shape = ink = per = None
        for key, pixels in _states(self):
            if shape is None:
                shape = pixels.shape
                per = frames_per_sprite(shape[0], shape[1])
                ink = np.zeros(shape[:2], bool)
            digest.update(pixels.tobytes())
            ink |= (pixels != 255).any(axis=2)
            keys.append(key)
            chunk.append(pixels)
            if len(chunk) == per:
                sprites.append(sprite(chunk))
                chunk = []
        if chunk:
            sprites.append(sprite(chunk))
        alts = [self.alt_text({p.name: p.values[int(j)] for p, j in
                               zip(self.params, key.split(","), strict=True)}) for key in keys]
        geometry = {"width": shape[1], "height": shape[0], "pad": SPRITE_PAD,
                    "perSprite": per, "count": len(keys), "pieces": narrow_pieces(ink),
                    "minScale": round(MIN_TEXT_PX / smallest_text_px(self.fig), 4)}
        self._packed = {"sprites": sprites, "keys": keys, "alts": alts, "geometry": geometry,
                        "digest": digest.hexdigest()}
        return self._packed

    # -- faces ----------------------------------------------------------------------------
    def widget(self):
        """The live face: ipywidgets inputs above the control's picture (created once).

        The picture (:func:`live_picture`) holds every state's frame, drawn when the control
        is displayed (:meth:`packed`, the same sprites as the site's); each input's ``index``
        is linked to it in the browser (``jslink``), so a move shows its frame at once, with
        no round trip to the kernel. The kernel follows the inputs: ``values`` and the figure
        are kept up to date.
        """
        if self._widget is not None:
            return self._widget
        import ipywidgets as W

        inputs = {p.name: p.live_widget() for p in self.params}
        picture = live_picture(self.packed(), [len(p.values) for p in self.params],
                               [w.index for w in inputs.values()])
        links = [W.jslink((w, "index"), (picture, f"i{n}"))
                 for n, w in enumerate(inputs.values())]

        def on_change(_change=None):
            self.set(draw=False, **{name: w.value for name, w in inputs.items()})

        for w in inputs.values():
            w.observe(on_change, names="value")
        box = W.VBox([W.HBox(list(inputs.values())), picture])
        box.inputs, box.picture, box.links = inputs, picture, links
        self._widget = box
        return box

    def explorable_html(self) -> str:
        """The explorable face: precomputed frames and HTML inputs, self-contained.

        The frames are packed into sprites (:meth:`packed`). The ``<img>`` of a sprite sits in
        a box one frame high that clips it (``aspect-ratio``, ``overflow: hidden``); its
        ``top`` picks the frame (:func:`sprite_rows`).
        """
        packed = self.packed()
        keys, geometry = packed["keys"], packed["geometry"]
        sprites = ["data:image/webp;base64," + base64.b64encode(s).decode("ascii")
                   for s in packed["sprites"]]
        per = geometry["perSprite"]
        uid = "explorable-" + packed["digest"][:12]
        indices = [p.values.index(self.values[p.name]) for p in self.params]
        default = _state_key(indices)
        at = keys.index(default)
        src = sprites[at // per]
        sprites[at // per] = None  # the <img> holds it: not twice in the page
        alts = dict(zip(keys, packed["alts"], strict=True))
        payload = json.dumps({"sprites": sprites, "sprite": geometry, "alts": alts,
                              "labels": [[p.fmt.format(v) for v in p.values]
                                         for p in self.params]})
        inputs = "".join(
            f'<div class="explorable-param">'
            f"{p.html_input(f'{uid}-{i}', i, self.values[p.name])}</div>"
            for i, p in enumerate(self.params))
        img = self._frame_img(src, alts[default], geometry, at)
        return (
            f'<div class="explorable" id="{uid}" data-state="{default}" role="group" '
            f'aria-label="Control: {", ".join(_describe(p) for p in self.params)}">'
            f'<div class="explorable-controls">{inputs}</div>'
            f'<div class="explorable-figure" style="overflow-x:auto">{img}</div>'
            f'<script type="application/json">{payload}</script>'
            f"<script>{_asset('explorable.js')}</script>"
            '<p class="explorable-note">Precomputed states: run the notebook for the live '
            "control.</p></div>"
        )

    def _frame_img(self, src: str, alt: str, geometry: dict, frame: int) -> str:
        """The explorable face's picture: a box one frame high that clips the sprite's
        ``<img>``, placed to show ``frame``. On a narrow screen the box keeps the width at
        which the smallest text is :data:`MIN_TEXT_PX` tall, and scrolls; ``explorable.js``
        shows the frame's two ``geometry["pieces"]`` instead, when it has them."""
        width, height = geometry["width"], geometry["height"]
        text_px = smallest_text_px(self.fig)
        min_width = math.ceil(width * MIN_TEXT_PX / text_px)
        row, rows = sprite_rows(geometry, frame)
        return (f'<div class="explorable-view" style="position:relative;overflow:hidden;'
                f"width:{width}px;max-width:100%;min-width:{min_width}px;"
                f'aspect-ratio:{width}/{height}">'
                f'<img src="{src}" alt="{html.escape(alt)}" data-text-px="{text_px:.1f}" '
                f'style="position:absolute;left:0;top:0;width:100%;max-width:none;height:auto;'
                f"aspect-ratio:{width}/{rows};transform:translateY(-{100 * row / rows:.5f}%)"
                f'"></div>')

    def _repr_mimebundle_(self, include=None, exclude=None):
        self.packed()  # every state, once, for both faces; its errors are the chapter's own
        bundle = {}
        try:
            widget_bundle = self.widget()._repr_mimebundle_()
        except Exception:  # no comm (plain IPython, nbconvert): fall back to the other faces
            widget_bundle = None
        if widget_bundle:
            bundle.update(widget_bundle)
        bundle["text/html"] = self.explorable_html()
        bundle["image/png"] = base64.b64encode(self.png()).decode("ascii")
        values = ", ".join(f"{k}={v!r}" for k, v in self.values.items())
        bundle["text/plain"] = f"Control({values})"
        return bundle
