"""lib.widgets.narrow: a wide figure's narrow drawing for phones (panels stacked)."""

from __future__ import annotations

import base64
import io

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from lib.widgets import narrow
from lib.widgets.narrow import (
    NARROW_KEY,
    NARROW_WIDTH,
    narrow_figure,
    narrow_png,
    needs_narrow,
    png_width,
    set_narrow,
)


def centres(fig):
    """The centre (x, y) of each Axes in figure fractions, after the figure's layout."""
    fig.canvas.draw()
    return [((b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2) for b in (ax.get_position() for ax in fig.axes)]


def test_a_row_of_panels_is_stacked_in_reading_order():
    fig, axes = plt.subplots(1, 3, figsize=(9.6, 3.2))
    for n, ax in enumerate(axes):
        ax.plot([0, 1], [0, n])
        ax.set_title(f"panel {n}")
    small = narrow_figure(fig)
    assert small.get_size_inches()[0] == NARROW_WIDTH
    assert small.get_size_inches()[1] == pytest.approx(3 * 3.2)
    xs, ys = zip(*centres(small), strict=True)
    assert max(xs) - min(xs) < 0.02, "stacked panels share one column"
    assert list(ys) == sorted(ys, reverse=True), "the first panel on top"
    assert [ax.get_title() for ax in small.axes] == ["panel 0", "panel 1", "panel 2"]
    plt.close(fig)


def test_a_grid_is_read_row_by_row_and_small_panels_go_two_by_two():
    fig, axes = plt.subplots(2, 2, figsize=(7, 5))
    for n, ax in enumerate(axes.flat):
        ax.set_title(str(n))
    small = narrow_figure(fig)
    assert [ax.get_title() for ax in small.axes] == ["0", "1", "2", "3"]
    assert len({round(x, 2) for x, _ in centres(small)}) == 1
    fig.clf()
    for n, ax in enumerate(fig.subplots(1, 5)):  # 1.4-inch panels: two to a row
        ax.set_title(str(n))
    small = narrow_figure(fig)
    assert len({round(x, 2) for x, _ in centres(small)}) == 2
    plt.close(fig)


def test_the_wide_figure_is_left_as_it_was_and_the_copy_is_not_shown():
    fig, axes = plt.subplots(1, 3, figsize=(9, 3), sharey=True)
    for ax in axes:
        ax.plot(np.arange(3), np.arange(3))
    before = [ax.get_position().bounds for ax in fig.axes]
    shown = plt.get_fignums()
    small = narrow_figure(fig)
    assert [ax.get_position().bounds for ax in fig.axes] == before
    assert fig.get_size_inches().tolist() == [9, 3]
    assert plt.get_fignums() == shown, "the copy must not join pyplot (a second output)"
    # shared y: every stacked panel shows its tick labels again
    assert all(ax.yaxis.get_tick_params()["labelleft"] for ax in small.axes)
    plt.close(fig)


def test_colorbars_legends_and_suptitle_are_kept():
    fig, axes = plt.subplots(1, 3, figsize=(9, 3))
    for ax in axes:
        image = ax.imshow(np.eye(4))
    fig.colorbar(image, ax=list(axes), label="weight")
    line, = axes[0].plot([0, 3], [0, 3], label="diagonal")
    fig.legend([line], ["diagonal"], loc="upper center", ncols=4)
    fig.suptitle("maps")
    small = narrow_figure(fig)
    bars = [ax for ax in small.axes if hasattr(ax, "_colorbar")]
    assert len(bars) == 1 and bars[0].get_xlabel() == "weight"
    assert len(small.legends) == 1 and small.legends[0].texts[0].get_text() == "diagonal"
    assert small.get_suptitle() == "maps"
    png = io.BytesIO()
    small.savefig(png, format="png")
    assert png_width(png.getvalue()) == NARROW_WIDTH * small.dpi
    plt.close(fig)


def test_a_lambda_tick_formatter_does_not_stop_the_copy():
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    axes[0].xaxis.set_major_formatter(lambda value, pos: f"{value:g}!")
    assert narrow_png(fig) is not None
    plt.close(fig)


def test_small_figures_get_no_narrow_drawing():
    assert narrow_png(Figure(figsize=(4.7, 3))) is None  # 470 px shrink to 338 px: legible
    assert narrow_png(Figure(figsize=(4.8, 3)))[:4] == b"\x89PNG"  # 480 px: to 346 px
    assert not needs_narrow(475) and needs_narrow(476)
    fig = Figure(figsize=(9, 3))
    fig.subplots(1, 2)
    assert narrow_png(fig, wide_width_px=400) is None  # as saved (a tight crop) it fits


def test_drawing_code_can_steer_the_narrow_layout():
    fig = Figure(figsize=(9, 3))
    fig.subplots(1, 4)
    seen = []
    set_narrow(fig, columns=2, panel_height=1.5, adjust=seen.append)
    small = narrow_figure(fig)
    assert small.get_size_inches().tolist() == [NARROW_WIDTH, 3.0]
    assert seen == [small]
    set_narrow(fig, skip=True)
    assert narrow_png(fig) is None


@pytest.mark.parametrize("call, error", [
    (lambda: narrow_figure("a figure"), TypeError),
    (lambda: narrow_figure(Figure(), width=0), ValueError),
    (lambda: narrow_png(None), TypeError),
    (lambda: needs_narrow(-1), ValueError),
    (lambda: set_narrow(Figure(), columns=0), ValueError),
    (lambda: set_narrow(Figure(), panel_height=-2), ValueError),
    (lambda: set_narrow(Figure(), adjust="move the legend"), TypeError),
    (lambda: set_narrow(plt.gca()), TypeError),
    (lambda: png_width(b"GIF89a"), ValueError),
])
def test_bad_input_is_a_clear_error(call, error):
    with pytest.raises(error):
        call()
    plt.close("all")


def test_the_formatter_adds_the_narrow_png_only_when_the_site_is_built(monkeypatch):
    fig = Figure(figsize=(9, 3))
    fig.subplots(1, 3)

    def wide(figure):
        out = io.BytesIO()
        figure.savefig(out, format="png")
        return base64.b64encode(out.getvalue()).decode()

    formatter = narrow._with_narrow(wide)
    monkeypatch.delenv(narrow.ENV, raising=False)
    assert isinstance(formatter(fig), str)
    monkeypatch.setenv(narrow.ENV, "1")
    data, meta = formatter(fig)
    assert data == wide(fig)
    assert png_width(base64.b64decode(meta[NARROW_KEY])) == 400
    small = Figure(figsize=(4, 3))
    assert isinstance(formatter(small), str), "a figure that shrinks legibly gets none"
    assert narrow.install() is False  # not under IPython


def test_a_chapter_figure_gets_a_narrow_drawing():
    from lib.figures import masks as figs

    fig = figs.draw_weight_maps({t: (np.full((4, 4), 0.25), np.ones((4, 4), bool))
                                 for t in ("a", "b", "c")})
    png = narrow_png(fig)
    assert png is not None and png_width(png) == 400
    plt.close(fig)


def test_the_site_and_the_downloads_read_the_key_lib_writes():
    """``tools/sphinx_ext`` cannot import lib (its figures pull in matplotlib at every build's
    start), so it names the metadata key itself: it must be the one lib writes."""
    import narrow_figures
    import notebook_export

    assert notebook_export.NARROW_KEY == narrow_figures.NARROW_KEY == NARROW_KEY
