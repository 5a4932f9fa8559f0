"""Sphinx extension: a figure drawn for a narrow screen, where the wide one cannot shrink.

On the site a figure keeps the width at which its text stays legible (``book.js``,
``keepLegible``), so a figure drawn 6.4 inches wide or more does not fit a phone's column.
``lib.widgets.narrow`` gives such a figure's notebook output a second PNG, drawn from the
same Figure with its panels stacked for a ~4-inch column, in
``metadata["image/png"]["narrow_png"]``.
Here, for the HTML builder only (the PDF keeps the wide figure):

* each output image is matched with its narrow PNG through the executed notebook
  (``_build/jupyter_execute/<doc>.ipynb``, its outputs merged from the execution cache as the
  downloads do): myst-nb names an output image by the sha256 of its bytes
  (``myst_nb.core.render``, ``render_image``);
* the narrow PNG is written into the site's ``_images`` (named by the sha256 of its bytes), and
  the image becomes ``<picture><source media="(max-width: …px)" srcset="…narrow…"><img …>
  </picture>``: the browser picks the narrow drawing on a screen too narrow for the wide one at
  a legible size. The ``<img>`` keeps its alt text and classes, the figure its caption.

The narrow file is written whenever its page is, so an incremental build that rewrites a page
has its narrow figures in ``_build/html/_images``, and one that does not has them already.
"""

from __future__ import annotations

import base64
import hashlib
import math
import os
import posixpath
from pathlib import Path

from docutils import nodes
from notebook_export import NARROW_KEY
from sphinx.transforms.post_transforms import SphinxPostTransform

#: The site's legibility rule (``book.js``): a figure is shown at least ``natural width ×
#: MIN_TEXT_PX / HOUSE_TEXT_PX`` wide.
MIN_TEXT_PX, HOUSE_TEXT_PX = 9.0, 12.5
#: A phone-sized page's column is the screen less this much (padding, both sides).
COLUMN_MARGIN_PX = 48


class picture(nodes.General, nodes.Element):
    """An image with a narrow variant: ``<picture>`` in HTML, the image alone elsewhere."""


def narrow_map(nb: dict) -> dict[str, bytes]:
    """The narrow PNG of each output image of an executed notebook, by the sha256 (hex) of
    the wide PNG's bytes."""
    found = {}
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            narrow = out.get("metadata", {}).get("image/png", {}).get(NARROW_KEY)
            wide = out.get("data", {}).get("image/png")
            if narrow and wide:
                wide = "".join(wide) if isinstance(wide, list) else wide
                key = hashlib.sha256(base64.b64decode(wide)).hexdigest()
                found[key] = base64.b64decode(narrow)
    return found


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG, from its header."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def media_query(wide_width: int) -> str:
    """The screens that get the narrow drawing: those narrower than the wide figure's
    smallest legible width plus the column's margins."""
    legible = math.ceil(wide_width * MIN_TEXT_PX / HOUSE_TEXT_PX)
    return f"(max-width: {legible + COLUMN_MARGIN_PX}px)"


class NarrowFigures(SphinxPostTransform):
    """Wrap each output image that has a narrow variant in a :class:`picture` node, and write
    the narrow PNG into the site's ``_images``."""

    default_priority = 400
    formats = ("html",)

    def run(self, **kwargs):
        import nbformat
        from downloads import with_cached_outputs
        from myst_nb.sphinx_ext import OUTPUT_FOLDER

        app = self.app
        executed = Path(app.outdir).parent / OUTPUT_FOLDER / f"{self.env.docname}.ipynb"
        if not executed.exists():
            return
        # myst-nb's copy has no outputs when they came from the execution cache: merge them
        variants = narrow_map(with_cached_outputs(app, nbformat.read(executed, as_version=4)))
        if not variants:
            return
        images = Path(app.outdir) / "_images"
        for image in list(self.document.findall(nodes.image)):
            stem = posixpath.splitext(posixpath.basename(image.get("uri", "")))[0]
            narrow = variants.get(stem)
            if narrow is None or isinstance(image.parent, picture):
                continue
            wide_file = Path(app.srcdir, image["uri"].lstrip("/"))
            if not wide_file.exists():
                continue
            name = hashlib.sha256(narrow).hexdigest() + ".png"
            images.mkdir(parents=True, exist_ok=True)
            target = images / name
            if not target.exists():
                target.write_bytes(narrow)
            with wide_file.open("rb") as f:
                wide_width = png_size(f.read(24))[0]
            width, height = png_size(narrow)
            wrapper = picture(narrow=name, media=media_query(wide_width), width=width,
                              height=height)
            image.replace_self(wrapper)
            wrapper += image


def visit_picture_html(self, node):
    # the narrow drawing is in the site's _images, as the builder's copy of the wide one
    srcset = posixpath.join(self.builder.imgpath, node["narrow"])
    self.body.append(f'<picture class="narrow-variant"><source media="{node["media"]}" '
                     f'srcset="{srcset}" width="{node["width"]}" height="{node["height"]}" />')


def depart_picture_html(self, node):
    self.body.append("</picture>\n")


def visit_passthrough(self, node):
    pass


def depart_passthrough(self, node):
    pass


def setup(app):
    # a chapter the build executes itself (tools/execute.py did not) draws its narrow figures
    os.environ["LIB_NARROW_FIGURES"] = "1"
    app.add_node(picture, html=(visit_picture_html, depart_picture_html),
                 latex=(visit_passthrough, depart_passthrough),
                 text=(visit_passthrough, depart_passthrough))
    app.add_post_transform(NarrowFigures)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
