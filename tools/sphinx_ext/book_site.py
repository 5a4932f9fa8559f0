"""Sphinx extension: the book's website, as five small extensions by concern.

Registered in ``_config.yml`` under ``sphinx.local_extensions``; each part is an extension of
its own in this folder, set up here:

* :mod:`offline_math` – MathJax 3 served by the site itself, lazily typeset;
* :mod:`page_weight` – icons, fonts, scripts and figures cut to what the pages use;
* :mod:`reader_pages` – the book's CSS and JavaScript for phones and screen readers, the
  favicon and colour mode, valid citation roles, the status table in words, Thebe offline;
* :mod:`narrow_figures` – a wide figure's narrow drawing, served to phones by ``<picture>``;
* :mod:`downloads` – each chapter's executed notebook as a portable download.
"""

from __future__ import annotations

PARTS = ("offline_math", "page_weight", "reader_pages", "narrow_figures", "downloads")


def setup(app):
    for part in PARTS:
        app.setup_extension(part)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
