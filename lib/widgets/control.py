"""A figure driven by parameters, with its live, static and explorable faces."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
from collections.abc import Callable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..plotting import use_house_style
from . import cache as frame_cache
from .frames import _state_key, _states
from .live import _asset, live_picture
from .params import MAX_PARAMS, _describe
from .phone import MIN_TEXT_PX, narrow_pieces, smallest_text_px
from .sprites import SPRITE_PAD, frames_per_sprite, sprite, sprite_rows

__all__ = ["Control"]


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
    cache : bool
        Keep the packed frames on disk, keyed by the code that drew them (:mod:`.cache`);
        ``False`` for a control drawn from measurements rather than seeded computation.
    """

    def __init__(self, setup: Callable, update: Callable, params, alt: str, figsize=(6.4, 3.6),
                 cache: bool = True):
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
        self._cache = bool(cache)

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
        entry = frame_cache.key(self._description()) if self._cache else None
        self._packed = frame_cache.load(entry)
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
        frame_cache.store(entry, self._packed)
        return self._packed

    def _description(self) -> str:
        """What the cache key adds to the code run so far: parameters, alt text, size."""
        return repr((self.params, self.alt, tuple(self.fig.get_size_inches()), self.fig.dpi))

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
            f"<script>{_asset('sprite.js')}{_asset('explorable.js')}</script>"
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
