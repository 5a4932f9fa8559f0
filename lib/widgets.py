"""Interactive controls with three faces: live, static, and explorable without a kernel.

A control is a figure driven by a few named parameters. The chapter supplies two pure
functions: ``setup(fig)`` draws the figure once and returns its artists, and
``update(artists, **values)`` recomputes and moves them. This module only wires them:

* **live** (Jupyter, Binder): ipywidgets controls redraw the figure into an ``Image`` widget;
* **static** (PDF, any viewer without HTML): the figure at the default values, as a PNG;
* **explorable** (the website, no kernel, no network): every combination of a small grid of
  parameter values is drawn once, ahead of time, and a few lines of inline JavaScript swap the
  pictures as the reader moves the HTML controls.

All three travel in one display bundle; each front end shows the face it can render (the site
is told to prefer ``text/html`` over the widget view in ``_config.yml``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plotting import use_house_style

#: Resolution of the frames stored in the explorable face (pixels per inch); ``None`` keeps
#: the figure's own (the house style's 100), which is sharp and avoids a costly re-layout.
EXPLORE_DPI = None


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
    step: float | None = None
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


@dataclass(frozen=True)
class Toggle:
    """A yes/no parameter (a checkbox)."""

    name: str
    default: bool = False
    label: str = ""

    @property
    def values(self):
        return (False, True)

    fmt: str = field(default="{}", repr=False)

    def validate(self, value):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{self.name} must be True or False, got {value!r}")
        return bool(value)


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


def _png(fig, dpi=None, quantize=False) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    if not quantize:
        return buf.getvalue()
    from PIL import Image

    buf.seek(0)
    img = Image.open(buf).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT,
                                                  dither=Image.Dither.NONE)
    out = io.BytesIO()
    img.save(out, format="png", optimize=True)
    return out.getvalue()


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

    def png(self, dpi=None, quantize=False) -> bytes:
        """The figure as it stands, as PNG bytes."""
        return _png(self.fig, dpi=dpi, quantize=quantize)

    def alt_text(self, values=None) -> str:
        return self.alt.format(**(values or self.values))

    # -- faces ----------------------------------------------------------------------------
    def widget(self):
        """The live face: ipywidgets controls above the figure (created once)."""
        if self._widget is not None:
            return self._widget
        import ipywidgets as W

        inputs = {}
        for p in self.params:
            desc = p.label or p.name
            style = {"description_width": "initial"}
            if isinstance(p, Slider):
                if p.integer:
                    step = int(p.step or 1)
                    w = W.IntSlider(value=p.default, min=p.min, max=p.max, step=step,
                                    description=desc, style=style, continuous_update=True)
                else:
                    step = p.step or (p.max - p.min) / 100
                    w = W.FloatSlider(value=p.default, min=p.min, max=p.max, step=step,
                                      description=desc, style=style, continuous_update=True)
            elif isinstance(p, Toggle):
                w = W.Checkbox(value=p.default, description=desc, style=style, indent=False)
            else:
                w = W.Dropdown(options=list(p.values), value=p.default, description=desc,
                               style=style)
            inputs[p.name] = w
        image = W.Image(value=self.png(), format="png")

        def on_change(_change=None):
            self.set(draw=False, **{name: w.value for name, w in inputs.items()})
            image.value = self.png()

        for w in inputs.values():
            w.observe(on_change, names="value")
        box = W.VBox([W.HBox(list(inputs.values())), image])
        box.inputs = inputs
        box.image = image
        box.refresh = on_change
        self._widget = box
        return box

    def explorable_html(self) -> str:
        """The explorable face: precomputed frames and HTML inputs, self-contained."""
        saved = dict(self.values)
        grids = [list(p.values) for p in self.params]
        frames = {}
        for combo in itertools.product(*[range(len(g)) for g in grids]):
            values = {p.name: g[i] for p, g, i in zip(self.params, grids, combo, strict=True)}
            self.set(draw=False, **values)
            data = base64.b64encode(self.png(dpi=EXPLORE_DPI, quantize=True)).decode("ascii")
            frames[",".join(map(str, combo))] = "data:image/png;base64," + data
        self.set(**saved)
        digest = hashlib.sha1(json.dumps(frames, sort_keys=True).encode()).hexdigest()[:12]
        uid = f"explorable-{digest}"
        default_key = ",".join(str(list(p.values).index(saved[p.name])) for p in self.params)
        controls = []
        labels = {}
        for i, p in enumerate(self.params):
            desc = html.escape(p.label or p.name)
            shown = [p.fmt.format(v) for v in p.values]
            labels[p.name] = shown
            idx = list(p.values).index(saved[p.name])
            if isinstance(p, Toggle):
                checked = " checked" if saved[p.name] else ""
                controls.append(
                    f'<label><input type="checkbox" data-param="{i}"{checked}> {desc}</label>'
                )
            elif isinstance(p, Choice):
                opts = "".join(
                    f'<option value="{j}"{" selected" if j == idx else ""}>{html.escape(s)}'
                    "</option>" for j, s in enumerate(shown)
                )
                controls.append(f'<label>{desc} <select data-param="{i}">{opts}</select></label>')
            else:
                controls.append(
                    f'<label>{desc} <input type="range" min="0" max="{len(p.values) - 1}" '
                    f'step="1" value="{idx}" data-param="{i}"> '
                    f'<output>{html.escape(shown[idx])}</output></label>'
                )
        alts = {
            key: self.alt_text({p.name: p.values[int(j)] for p, j in
                                zip(self.params, key.split(","), strict=True)})
            for key in frames
        }
        payload = json.dumps({"frames": frames, "alts": alts,
                              "labels": [labels[p.name] for p in self.params]})
        script = (
            "(function(){var root=document.getElementById('__UID__');"
            "var data=JSON.parse(root.querySelector('script[type=\"application/json\"]')"
            ".textContent);var img=root.querySelector('img');"
            "var inputs=root.querySelectorAll('[data-param]');"
            "function key(){var k=[];inputs.forEach(function(el){k[+el.dataset.param]="
            "el.type==='checkbox'?(el.checked?1:0):+el.value;});return k.join(',');}"
            "function show(){var k=key();img.src=data.frames[k];img.alt=data.alts[k];"
            "root.dataset.state=k;inputs.forEach(function(el){var o=el.parentNode."
            "querySelector('output');if(o){o.textContent=data.labels[+el.dataset.param]"
            "[+el.value];}});}"
            "inputs.forEach(function(el){el.addEventListener('input',show);"
            "el.addEventListener('change',show);});show();})();"
        ).replace("__UID__", uid)
        return (
            f'<div class="explorable" id="{uid}" data-state="{default_key}">'
            f'<div class="explorable-controls">{" ".join(controls)}</div>'
            f'<img src="{frames[default_key]}" alt="{html.escape(alts[default_key])}" '
            'style="max-width:100%;height:auto">'
            f'<script type="application/json">{payload}</script>'
            f"<script>{script}</script>"
            '<p class="explorable-note">Precomputed states: run the notebook for the live '
            "control.</p></div>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
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
