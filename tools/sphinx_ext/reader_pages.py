"""Sphinx extension: the page as every reader meets it (phones, screen readers, offline).

* the book's CSS and JavaScript (``book/_static/book.css`` and ``book.js``): display equations
  that do not fit scroll inside their box with a visible cue, control figures and figures keep
  a legible size (their box scrolls on a narrow screen), the inputs of a control stack with
  each label beside its value, skip links lead to each control, links in theorem and exercise
  boxes have enough contrast, and the search results show math as text;
* a favicon (no 404), and the theme's colour mode defaults to ``auto`` (no "invalid theme
  mode" error in the console);
* citations are list items of the references list (valid ARIA);
* the execution-status table (book/status.md) says "passed"/"failed" in words, not emoji;
* Thebe offline: live code loads Thebe from a CDN only when the reader clicks *Live Code*;
  with no network the button says so instead of hanging on "Loading...".
"""

from __future__ import annotations

from pathlib import Path

#: The book's own CSS and JavaScript (phones, accessibility, search), and its favicon.
STATIC_DIR = Path(__file__).resolve().parents[2] / "book" / "_static"


THEBE_OFFLINE_JS = """
window.addEventListener('error', function (ev) {
  var el = ev.target;
  if (!el || el.tagName !== 'SCRIPT' || !/thebe/i.test(el.src || '')) { return; }
  document.querySelectorAll('.thebe-launch-button').forEach(function (b) {
    b.textContent = 'Live code needs an internet connection (it starts a Binder kernel). '
      + 'Everything else on this page works offline.';
  });
}, true);
"""


def configure_site(app, config):
    """The book's static files, its favicon, and the theme's default colour mode."""
    config.html_static_path = [*config.html_static_path, str(STATIC_DIR)]
    if not config.html_favicon:
        config.html_favicon = str(STATIC_DIR / "favicon.svg")
    # the theme writes `localStorage.mode || "<default_mode>"`; empty, it logs an error
    config.html_context = {"default_mode": "auto", **(config.html_context or {})}


def fix_citation_roles(app, pagename, templatename, context, doctree):
    """docutils lists citations as ``role="list"`` holding ``role="doc-biblioentry"`` items,
    a role ARIA 1.2 deprecates and a list may not contain: make each entry a list item."""
    body = context.get("body")
    if isinstance(body, str) and 'role="doc-biblioentry"' in body:
        context["body"] = body.replace('role="doc-biblioentry"', 'role="listitem"')


def plain_status_words():
    """The execution-status table ({nb-exec-table}) says "passed"/"failed" in words, not in
    emoji that some fonts (and screen readers) render poorly."""
    try:
        from myst_nb.ext import execution_tables
    except ImportError:  # pragma: no cover - another myst-nb layout
        return
    transforms = getattr(execution_tables, "_key2transform", None)
    if isinstance(transforms, dict) and "succeeded" in transforms:
        transforms["succeeded"] = lambda ok: "passed" if ok is True else "failed"


def setup(app):
    plain_status_words()
    app.connect("config-inited", configure_site)
    app.connect("html-page-context", fix_citation_roles)
    app.add_js_file(None, body=THEBE_OFFLINE_JS)
    app.add_css_file("book.css")
    app.add_js_file("book.js", defer="defer")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
