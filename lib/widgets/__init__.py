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

One module per job:

* :mod:`.params` – :class:`Slider`, :class:`Toggle`, :class:`Choice`;
* :mod:`.frames` – every state drawn (:func:`render_frames`);
* :mod:`.sprites` – frames packed in WebP sprites, and where a frame lies in them (the
  browser's side of that arithmetic is ``sprite.js``, loaded by both faces);
* :mod:`.cache` – packed frames kept on disk, keyed by the code that drew them;
* :mod:`.phone` – a frame's legible size and its cut into two pieces on a narrow screen;
* :mod:`.live` – the live face's picture (an anywidget);
* :mod:`.control` – :class:`Control`, which puts them together;
* :mod:`.folded` – :func:`folded_output`, for what a solution prints.
"""

# The public names (__all__), and the pieces tests and benchmarks import from here (each is
# documented in its module).
from .control import Control
from .folded import folded_output
from .frames import _frame_pixels, render_frames  # noqa: F401
from .live import live_picture  # noqa: F401
from .params import MAX_PARAMS, Choice, Slider, Toggle  # noqa: F401
from .phone import MIN_TEXT_PX, narrow_pieces, smallest_text_px, split_column  # noqa: F401
from .sprites import SPRITE_PAD, frames_per_sprite, sprite, sprite_rows  # noqa: F401

__all__ = ["Choice", "Control", "Slider", "Toggle", "folded_output", "render_frames", "sprite"]
