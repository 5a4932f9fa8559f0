"""Sphinx extension: the page as every reader meets it (phones, screen readers, offline).

* the book's CSS and JavaScript (``book/_static/book.css`` and ``book.js``): display equations
  that do not fit scroll inside their box with a visible cue, control figures and figures keep
  a legible size (their box scrolls on a narrow screen), the inputs of a control stack with
  each label beside its value, skip links lead to each control, links in theorem and exercise
  boxes have enough contrast, and the search results show math as text;
* a favicon (no 404), and the theme's colour mode defaults to ``auto`` (no "invalid theme
  mode" error in the console);
* citations are list items of the references list (valid ARIA), and the list is labelled and
  sorted by author and year, as the text cites (``Vaswani et al. 2017``, not ``[VSP+17]``);
* the execution-status table (book/status.md) says "passed"/"failed" in words, not emoji;
* every page has a description for search engines and link previews (its front matter's
  ``html_meta``, or else its first paragraph), and the landing page's tab says the title once;
* a "Predict, then run" box is not answered on the same screen: the output of the code cell
  right after it is folded behind "Show the answer" (in JupyterLab it stays as the reader's
  run leaves it), unless that output is a control, which the reader moves to find out;
* Thebe offline: live code loads Thebe from a CDN only when the reader clicks *Live Code*;
  with no network the button says so instead of hanging on "Loading...".
"""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

from sphinx.transforms.post_transforms import SphinxPostTransform

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


#: The longest description a search result shows, in characters.
DESCRIPTION_CHARS = 160


def first_paragraph(doctree) -> str:
    """The text of a page's first paragraph of prose (not in a table, an admonition or a
    cell), on one line, cut at a word to :data:`DESCRIPTION_CHARS`."""
    from docutils import nodes

    for para in doctree.findall(nodes.paragraph):
        if any(isinstance(a, (nodes.table, nodes.Admonition, nodes.container))
               for a in _ancestors(para)):
            continue
        text = " ".join(plain_text(para).split())
        if len(text.split()) >= 8:
            if len(text) > DESCRIPTION_CHARS:
                text = text[:DESCRIPTION_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
            return text
    return ""


#: TeX that a description spells in Unicode; other commands lose their backslash and braces.
TEX_WORDS = [(r"\\sqrt\{([^{}]*)\}", r"√\1"), (r"\\cdot", "·"), (r"\^\\top", "ᵀ"),
             (r"\\top", "ᵀ"), (r"\\le\b", "≤"), (r"\\ge\b", "≥"), (r"\\infty", "∞")]


def plain_text(node) -> str:
    """A node's text with its inline math spelled plainly (``\\sqrt{d_k}`` → ``√d_k``)."""
    from docutils import nodes

    node = node.deepcopy()
    for math in list(node.findall(nodes.math)):
        tex = math.astext()
        for pattern, plain in TEX_WORDS:
            tex = re.sub(pattern, plain, tex)
        math.replace_self(nodes.Text(re.sub(r"[\\{}]", "", tex)))
    return node.astext()


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def describe_page(app, pagename, templatename, context, doctree):
    """A description for every page (search engines, link previews); on the landing page the
    title once: its heading, not again in the tab's suffix and the sidebar's brand (the basic
    layout writes both from ``docstitle``)."""
    if pagename == app.config.root_doc:
        context["docstitle"] = ""
    tags = context.get("metatags", "")
    if doctree is None or 'name="description"' in tags:
        return
    text = first_paragraph(doctree)
    if text:
        text = re.sub(r"\s+", " ", text)
        context["metatags"] = tags + f'\n<meta name="description" content="{html.escape(text)}" />'


PREDICT_CLASS = "predict"
ANSWER_SHOW, ANSWER_HIDE = "Show the answer", "Hide the answer"


def predicted_cells(doctree) -> list:
    """The code cells (myst-nb containers) that come right after a "Predict, then run" box."""
    from docutils import nodes

    cells = []
    for box in doctree.findall(nodes.Admonition):
        if PREDICT_CLASS not in box.get("classes", []):
            continue
        after = box.next_node(descend=False, siblings=True, ascend=False)
        while isinstance(after, nodes.target):
            after = after.next_node(descend=False, siblings=True, ascend=False)
        if isinstance(after, nodes.container) and after.get("nb_element") == "cell_code":
            cells.append(after)
    return cells


def fold_predicted_answers(doctree) -> None:
    """Fold the output of each cell a prediction asks about with myst-nb's own ``hide-output``
    (a cell whose input is hidden keeps it hidden); run before myst-nb's ``HideInputCells``."""
    from docutils import nodes

    for cell in predicted_cells(doctree):
        if not cell.children or cell.children[-1].get("nb_element") != "cell_code_output":
            continue
        if any('class="explorable' in raw.astext() for raw in cell.findall(nodes.raw)):
            continue  # a control is the experiment itself: the reader moves it to find out
        mode = cell.get("hide_mode")
        if mode not in ("all", "output", "input+output"):
            cell["hide_mode"] = "input+output" if mode == "input" else "output"
            cell.setdefault("prompt_show", "Show code cell {type}")
            cell.setdefault("prompt_hide", "Hide code cell {type}")
        cell["classes"].append("predicted")


def label_answers(doctree) -> None:
    """The folded output of a predicted cell reads "Show the answer", a wholly folded one
    "Show the code and the answer" (after myst-nb wrapped them)."""
    from docutils import nodes
    from myst_nb.sphinx_ import HideCodeCellNode

    for cell in doctree.findall(nodes.container):
        if "predicted" not in cell.get("classes", []):
            continue
        for wrap in cell.findall(HideCodeCellNode):
            if {"below-input", "above-output"} & set(wrap.get("classes", [])):
                wrap["prompt_show"], wrap["prompt_hide"] = ANSWER_SHOW, ANSWER_HIDE
            elif cell.get("hide_mode") == "all":  # the whole cell was folded already
                wrap["prompt_show"] = "Show the code and the answer"
                wrap["prompt_hide"] = "Hide the code and the answer"


class FoldPredictedAnswers(SphinxPostTransform):
    """:func:`fold_predicted_answers`, just before myst-nb's ``HideInputCells`` (199)."""

    default_priority = 198
    formats = ("html",)

    def run(self, **kwargs):
        fold_predicted_answers(self.document)


class LabelAnswers(SphinxPostTransform):
    """:func:`label_answers`, just after myst-nb's ``HideInputCells`` (199)."""

    default_priority = 200
    formats = ("html",)

    def run(self, **kwargs):
        label_answers(self.document)


def register_author_year_style() -> None:
    """A pybtex style ``authoryear``: unsrt's entries, labelled "Surname 2017", "Surname and
    Other 2019" or "Surname et al. 2017" (a, b after the year when two would be equal), and
    sorted by author, year and title."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.unsrt import Style as Unsrt
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            labels = [self.label(entry) for entry in sorted_entries]
            counts, seen = Counter(labels), Counter()
            for label in labels:
                if counts[label] == 1:
                    yield label
                else:
                    yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label]]
                    seen[label] += 1

        @staticmethod
        def label(entry) -> str:
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            names = [" ".join(p.last_names) for p in people] or [entry.fields.get("title", "")]
            who = (names[0] if len(names) == 1 else f"{names[0]} and {names[1]}"
                   if len(names) == 2 else f"{names[0]} et al.")
            return f"{who} {entry.fields.get('year', 'n.d.')}".replace("{", "").replace("}", "")

    class AuthorYear(Unsrt):
        default_label_style = AuthorYearLabels
        default_sorting_style = "author_year_title"

    register_plugin("pybtex.style.formatting", "authoryear", AuthorYear)


EMPTY_BRAND = re.compile(r'<a class="navbar-brand logo" href="([^"]*)">'
                         r'(\s*<p class="title logo__title"></p>\s*)</a>')


def label_empty_brand(site: Path) -> None:
    """The landing page's sidebar brand has no text (its title is the page's heading): name
    the link for screen readers."""
    from page_weight import rewrite_pages  # tools/sphinx_ext

    rewrite_pages(site, lambda text: EMPTY_BRAND.sub(
        r'<a class="navbar-brand logo" href="\1" aria-label="Home">\2</a>', text))


def finish_pages(app, exception):
    if exception is None and app.builder.format == "html":
        label_empty_brand(Path(app.outdir))


#: Where the hover previews of every page are kept between builds (see :func:`keep_tips`).
TIPS_FILE = "tippy_pages.pickle"


def restore_tips(app):
    """sphinx-tippy collects each page's previews while it writes the page, after Sphinx has
    saved its environment: a later build that rewrites only some pages would lose the others'
    previews, and links into them would show none. Start from the last build's."""
    path = Path(app.doctreedir) / TIPS_FILE
    if app.builder.format == "html" and path.exists():
        import pickle

        with path.open("rb") as handle:
            pages = pickle.load(handle)
        data = getattr(app.env, "tippy_data", None) or {"pages": {}, "wiki_titles": set()}
        data["pages"] = {**pages, **data["pages"]}
        app.env.tippy_data = data


def keep_tips(app, exception):
    """Save every page's previews for the next build (:func:`restore_tips`)."""
    data = getattr(app.env, "tippy_data", None)
    if exception is None and app.builder.format == "html" and data:
        import pickle

        with (Path(app.doctreedir) / TIPS_FILE).open("wb") as handle:
            pickle.dump(data["pages"], handle)


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
    register_author_year_style()
    app.connect("config-inited", configure_site)
    app.connect("html-page-context", fix_citation_roles)
    app.connect("html-page-context", describe_page)
    app.add_post_transform(FoldPredictedAnswers)
    app.add_post_transform(LabelAnswers)
    app.connect("builder-inited", restore_tips)
    app.connect("build-finished", keep_tips)
    app.connect("build-finished", finish_pages)
    app.add_js_file(None, body=THEBE_OFFLINE_JS)
    app.add_css_file("book.css")
    app.add_js_file("book.js", defer="defer")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
