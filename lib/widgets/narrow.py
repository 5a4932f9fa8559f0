"""Figures for narrow screens: a second PNG of a wide figure, drawn for a phone's column.

On the site a figure keeps at least the width at which its text stays legible
(``book/_static/book.js``: 9 px text, drawn at 12.5 px), so a figure drawn 6.4 inches wide or
more is wider than a phone's text column. For such a figure the notebook output carries a
second PNG, drawn from a copy of the same Figure re-laid-out for a column about
:data:`NARROW_WIDTH` inches wide: the panels of its grid stacked in one column, each as tall
as before (two side by side if they are small), legends and titles kept, colorbars drawn
again, laid out again (constrained layout). The site serves it
to narrow screens through ``<picture>`` (``tools/sphinx_ext/narrow_figures.py``); JupyterLab
and the print edition show the wide one.

* :func:`install` wraps IPython's PNG formatter for matplotlib Figures so that a wide
  figure's output gets the narrow PNG in its metadata, ``metadata["image/png"][NARROW_KEY]``
  (base64); :func:`lib.plotting.use_house_style` calls it, so every chapter has it. It draws
  only when the site is built (:data:`ENV` set to ``1``): a reader's kernel, JupyterLab and
  the tests show the wide figure alone and pay nothing;
* :func:`narrow_figure` is the re-laid-out copy, :func:`narrow_png` its PNG (or None when the
  figure shrinks legibly as it is);
* :func:`set_narrow` lets the drawing code steer the narrow layout of one figure (how many
  columns of panels, their height, a last adjustment, or no variant at all).
"""

from __future__ import annotations

import base64
import io
import os
import pickle
import types
import weakref

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.gridspec import GridSpec

__all__ = ["ENV", "NARROW_KEY", "drawing_enabled", "install", "narrow_figure", "narrow_png",
           "needs_narrow", "png_width", "set_narrow"]

#: The key of the narrow PNG (base64) in an output's ``metadata["image/png"]``.
NARROW_KEY = "narrow_png"
#: The environment variable that turns the drawing on (``1``): see :func:`drawing_enabled`.
ENV = "LIB_NARROW_FIGURES"
#: The width of a narrow figure, in inches (400 px at the house style's 100 dpi: shown in a
#: phone's 342 px column at 0.86 scale, its 12.5 px text is 10.7 px tall).
NARROW_WIDTH = 4.0
#: The site's rule (``book/_static/book.js``, ``keepLegible``): a figure is never shown
#: narrower than ``natural width × MIN_TEXT_PX / HOUSE_TEXT_PX``.
MIN_TEXT_PX = 9.0
HOUSE_TEXT_PX = 12.5
#: The text column of a 390 px phone, in CSS pixels (measured in Chromium: 342).
PHONE_COLUMN_PX = 342

#: Per-figure steering set by :func:`set_narrow` (weak: it goes with the figure).
_STEERING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def needs_narrow(width_px: float) -> bool:
    """Whether a figure ``width_px`` pixels wide (as saved) is wider than a phone's column
    once shrunk to its smallest legible width.

    >>> needs_narrow(640), needs_narrow(470)
    (True, False)
    """
    width_px = float(width_px)
    if not width_px > 0:
        raise ValueError(f"width_px must be a positive number of pixels, got {width_px!r}")
    return width_px * MIN_TEXT_PX / HOUSE_TEXT_PX > PHONE_COLUMN_PX


def set_narrow(fig, *, columns: int | None = None, panel_height: float | None = None, adjust=None,
               skip: bool = False):
    """Steer the narrow variant of ``fig``: ``columns`` of panels (1: stacked; default: two
    if the panels are small enough, else one), each
    ``panel_height`` inches tall (default: as tall as in the wide figure), then
    ``adjust(narrow_fig)`` on the re-laid-out copy (move a legend, thin the ticks); with
    ``skip``, no narrow variant. Returns ``fig``.

    >>> fig = Figure(figsize=(9, 3)); _ = fig.subplots(1, 3)
    >>> set_narrow(fig, columns=2) is fig
    True
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"set_narrow needs a matplotlib Figure, got {type(fig).__name__}")
    if columns is not None and (int(columns) != columns or columns < 1):
        raise ValueError(f"columns must be a whole number >= 1, got {columns!r}")
    if panel_height is not None and not float(panel_height) > 0:
        raise ValueError(f"panel_height must be > 0 inches, got {panel_height!r}")
    if adjust is not None and not callable(adjust):
        raise TypeError("adjust must be a function of the narrow Figure")
    _STEERING[fig] = {"columns": columns and int(columns), "panel_height": panel_height,
                      "adjust": adjust, "skip": bool(skip)}
    return fig


class _Pickler(pickle.Pickler):
    """Pickles lambdas and local functions by reference (the copy is unpickled in this
    process): a lambda tick formatter, which pickle refuses, is shared with the copy."""

    def __init__(self, file, shared: list):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.shared = shared

    def persistent_id(self, obj):
        if isinstance(obj, types.FunctionType) and (
                "<" in obj.__qualname__):  # a lambda or a local function
            self.shared.append(obj)
            return len(self.shared) - 1
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, shared: list):
        super().__init__(file)
        self.shared = shared

    def persistent_load(self, pid):
        return self.shared[pid]


def _copy(fig: Figure) -> Figure:
    """A detached copy of ``fig`` (a pickle round trip that does not register the copy with
    pyplot, which would show it as a second output), on an Agg canvas."""
    manager, shared, buffer = fig.canvas.manager, [], io.BytesIO()
    fig.canvas.manager = None
    try:
        _Pickler(buffer, shared).dump(fig)
    finally:
        fig.canvas.manager = manager
    buffer.seek(0)
    copy = _Unpickler(buffer, shared).load()
    FigureCanvasAgg(copy)
    return copy


def _panels(fig: Figure):
    """The figure's panels (Axes in a grid, colorbars aside) in reading order, with the
    height of the grid row each one sits in (inches), and its colorbars."""
    panels, colorbars = [], []
    for ax in fig.axes:
        if hasattr(ax, "_colorbar"):
            colorbars.append(ax)
            continue
        spec = ax.get_subplotspec()
        if spec is None:
            continue  # an Axes placed by hand (an inset, a readout): left where it is
        top = spec.get_topmost_subplotspec()
        grid = top.get_gridspec()
        rows, cols = grid.get_geometry()
        ratios = grid.get_height_ratios() or [1] * rows
        share = sum(ratios[r] for r in top.rowspan) / sum(ratios)
        own = spec.rowspan.start, spec.colspan.start
        panels.append(((top.rowspan.start, top.colspan.start, *own), ax,
                       share * fig.get_figheight(), fig.get_figwidth() * len(top.colspan) / cols))
    panels.sort(key=lambda p: p[0])
    return [(ax, height, width) for _, ax, height, width in panels], colorbars


def _columns(panels, width: float) -> int:
    """How many panels fit side by side in ``width`` inches: small panels (a row of five
    histograms) go two by two rather than five tall, at about their wide size."""
    narrowest = max((w for _, _, w in panels), default=width)
    return max(1, min(2, len(panels), int(1.15 * width / narrowest)))


def _figure_legends(copy: Figure) -> None:
    """A figure legend (above or beside the panels) placed again above the stack, in at
    most two columns, with room made for it by the layout."""
    for legend in list(copy.legends):
        handles, labels = legend.legend_handles, [t.get_text() for t in legend.texts]
        title = legend.get_title().get_text()
        size = legend.texts[0].get_fontsize() if legend.texts else None
        legend.remove()
        copy.legend(handles, labels, loc="outside upper center", ncols=min(2, len(labels)),
                    title=title or None, fontsize=size)


def _take_colorbars(copy: Figure, colorbars) -> list:
    """Remove the colorbars of ``copy``, returning what draws them again: mappable, parent
    Axes, orientation, label."""
    bars = []
    for cax in colorbars:  # drawn again beside their (moved) panels by the new layout
        bar = cax._colorbar
        info = getattr(cax, "_colorbar_info", {})
        parents = [p for p in info.get("parents", []) if p in copy.axes]
        bars.append((bar.mappable, parents, bar.orientation,
                     cax.get_ylabel() if bar.orientation == "vertical" else cax.get_xlabel()))
        cax.remove()
        for ax in copy.axes:  # make_axes listed it with its parents, for constrained layout
            if cax in getattr(ax, "_colorbars", []):
                ax._colorbars.remove(cax)
    return bars


def _redraw_colorbars(copy: Figure, bars) -> None:
    """Draw again the colorbars :func:`_take_colorbars` removed, beside their moved panels."""
    for mappable, parents, orientation, label in bars:
        parents = parents or [a for a in copy.axes if mappable in a.get_children()]
        if len(parents) > 1:  # one bar for a stack of panels: across its foot, not its side
            copy.colorbar(mappable, ax=parents, location="bottom", label=label, shrink=0.8,
                          aspect=30)
        else:
            copy.colorbar(mappable, ax=parents, orientation=orientation, label=label)


def narrow_figure(fig, width: float = NARROW_WIDTH) -> Figure:
    """A copy of ``fig`` laid out for a column ``width`` inches wide: its panels stacked
    (in :func:`set_narrow`'s number of columns), each as tall as its row was, shared axes'
    tick labels shown on every panel, colorbars drawn again beside their panels, and the
    whole laid out again with constrained layout. ``fig`` is left as it was.

    >>> fig = Figure(figsize=(9, 3)); _ = fig.subplots(1, 3)
    >>> small = narrow_figure(fig); small.get_size_inches().tolist()
    [4.0, 9.0]
    >>> [bool(ax.get_position().y0 > 0.5) for ax in small.axes]
    [True, False, False]
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"narrow_figure needs a matplotlib Figure, got {type(fig).__name__}")
    if not float(width) > 0:
        raise ValueError(f"width must be > 0 inches, got {width!r}")
    width, steer = float(width), _STEERING.get(fig, {})
    copy = _copy(fig)
    panels, colorbars = _panels(copy)
    columns = steer.get("columns") or _columns(panels, width)
    bars = _take_colorbars(copy, colorbars)
    if panels:
        columns = min(columns, len(panels))
        rows = -(-len(panels) // columns)
        # each row as tall as it was (a long axis label keeps its room), less where two
        # small panels side by side got narrower than they were
        heights = [max(h * (min(1.0, width / columns / w) if columns > 1 else 1.0)
                       for _, h, w in panels[r * columns:(r + 1) * columns])
                   for r in range(rows)]
        if steer.get("panel_height"):
            heights = [float(steer["panel_height"])] * rows
        grid = GridSpec(rows, columns, figure=copy, height_ratios=heights)
        for n, (ax, _, _) in enumerate(panels):
            ax.set_subplotspec(grid[n // columns, n % columns])
            for axis, side in ((ax.xaxis, "labelbottom"), (ax.yaxis, "labelleft")):
                shared = ax.get_shared_x_axes() if axis is ax.xaxis else ax.get_shared_y_axes()
                if len(shared.get_siblings(ax)) > 1:
                    axis.set_tick_params(which="both", **{side: True})
        height = sum(heights) + 0.1 * copy.get_figheight() * (copy._suptitle is not None)
    else:
        height = copy.get_figheight()
    height += 0.25 * sum(-(-len(legend.texts) // 2) for legend in copy.legends)
    copy.set_layout_engine(None)
    copy.set_size_inches(width, height, forward=False)
    copy.set_layout_engine("constrained")
    _figure_legends(copy)
    _redraw_colorbars(copy, bars)
    if steer.get("adjust"):
        steer["adjust"](copy)
    return copy


def narrow_png(fig, wide_width_px: float | None = None) -> bytes | None:
    """The PNG of :func:`narrow_figure` at ``fig``'s dpi, or None if the figure needs none:
    it is ``wide_width_px`` wide as saved (default: its own width) and that shrinks legibly
    into a phone's column (:func:`needs_narrow`), or :func:`set_narrow` said ``skip``.

    >>> narrow_png(Figure(figsize=(4, 3))) is None
    True
    >>> narrow_png(Figure(figsize=(9, 3)))[:4]
    b'\\x89PNG'
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"narrow_png needs a matplotlib Figure, got {type(fig).__name__}")
    if wide_width_px is None:
        wide_width_px = fig.get_figwidth() * fig.dpi
    if _STEERING.get(fig, {}).get("skip") or not needs_narrow(wide_width_px):
        return None
    copy = narrow_figure(fig)
    out = io.BytesIO()
    copy.savefig(out, format="png", dpi=fig.dpi, facecolor=fig.get_facecolor())
    return out.getvalue()


def png_width(png: bytes) -> int:
    """The width in pixels of a PNG, from its header.

    >>> png_width(narrow_png(Figure(figsize=(9, 3))))
    400
    """
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return int.from_bytes(png[16:20], "big")


def drawing_enabled() -> bool:
    """Whether displayed figures get their narrow PNG: when :data:`ENV` is ``1``, as the
    site's build sets it (``tools/execute.py``, ``tools/sphinx_ext/narrow_figures.py``). Only
    the site uses the narrow drawing, so a reader's kernel, JupyterLab and the tests' runs
    do not pay for it (about 0.1–0.3 s a wide figure).

    >>> import os; os.environ.pop(ENV, None); drawing_enabled()
    False
    """
    return os.environ.get(ENV, "") == "1"


def _with_narrow(wide_formatter):
    """``wide_formatter`` (IPython's PNG formatter of a Figure), returning the wide PNG and,
    when :func:`drawing_enabled`, the narrow one in its metadata."""

    def formatter(fig):
        result = wide_formatter(fig)
        if not drawing_enabled():
            return result
        data, meta = result if isinstance(result, tuple) else (result, None)
        if data is None:
            return result
        raw = data if isinstance(data, bytes) else base64.b64decode(data)
        try:
            narrow = narrow_png(fig, png_width(raw))
        except Exception:  # never lose the figure itself over its narrow variant (the
            narrow = None  # site's test finds a wide figure without one)
        if narrow is None:
            return result
        meta = dict(meta or {})
        meta[NARROW_KEY] = base64.b64encode(narrow).decode("ascii")
        return data, meta

    formatter.narrow_wrapped = True
    return formatter


def install(shell=None) -> bool:
    """Give every wide Figure displayed in IPython its narrow PNG (see the module's doc):
    wrap the ``image/png`` formatter the inline backend registered for Figure, now and before
    every cell (the inline backend may register its own again after the cell that first
    imports pyplot, and ``%matplotlib inline`` does). Returns whether it is installed (False
    outside IPython).

    >>> install()  # not under IPython
    False
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    import matplotlib.pyplot as plt

    # load the backend now (pyplot loads it at the first figure): the inline backend
    # registers its PNG formatter of Figure as it loads
    getattr(plt, "_get_backend_mod", plt.get_backend)()
    if _ensure_wrapped not in shell.events.callbacks["pre_run_cell"]:
        shell.events.register("pre_run_cell", _ensure_wrapped)
    return _wrap(shell)


def _wrap(shell) -> bool:
    """Wrap the shell's PNG formatter of Figure, unless it is wrapped already."""
    png = shell.display_formatter.formatters["image/png"]
    try:
        current = png.lookup_by_type(Figure)
    except KeyError:
        return False
    if not getattr(current, "narrow_wrapped", False):
        png.for_type(Figure, _with_narrow(current))
    return True


def _ensure_wrapped(info=None) -> None:
    """``pre_run_cell`` callback: the formatter stays wrapped (see :func:`install`)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        _wrap(shell)
