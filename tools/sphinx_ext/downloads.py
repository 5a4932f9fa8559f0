"""Sphinx extension: each chapter's executed notebook, as a download that opens anywhere.

sphinx-book-theme copies each chapter's executed notebook (``jupyter_execute/<page>.ipynb``)
to ``_sources/<page>.ipynb`` and offers it in the download menu; this extension rewrites that
copy for readers outside the book (Colab, plain Jupyter): MyST-only syntax becomes plain
Markdown (:mod:`notebook_export`), widget views and widget state are dropped (the HTML face
and the PNG stay), and a first cell says where it comes from, how to re-run it and with
which versions the book was checked. The launch menu gains "Colab", which opens that
notebook as the published site serves it: from the repository's ``book_pages_branch``
(``_config.yml``; GitHub Pages' ``gh-pages`` by default), where the site's
``_sources/<page>.ipynb`` lies. The repository's URL is ``repository.url`` in
``_config.yml``, and nowhere else.
"""

from __future__ import annotations

import platform
import re
from importlib import metadata
from pathlib import Path

import nbformat
from notebook_export import export_notebook


def with_cached_outputs(app, nb):
    """``nb`` with the outputs of its execution, taken from the jupyter-cache when missing.

    myst-nb writes ``jupyter_execute/<page>.ipynb`` from the notebook it parsed; when the
    outputs came from the cache (no re-execution) that copy has none (myst-nb 1.4 merges the
    cached outputs into a new object). The cache holds the executed notebook: merge it in.
    """
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not code or any(c.get("outputs") or c.get("execution_count") for c in code):
        return nb
    cache_path = getattr(app.env, "mystnb_config", None)
    cache_path = getattr(cache_path, "execution_cache_path", "") or \
        Path(app.outdir).parent / ".jupyter_cache"
    if not Path(cache_path).exists():
        return nb
    from jupyter_cache import get_cache

    try:
        _, merged = get_cache(str(cache_path)).merge_match_into_notebook(nb)
    except KeyError:  # not in the cache (e.g. execution off): offer it as it is
        return nb
    return merged


#: How a numbered reference reads, per Sphinx "figtype" (sphinx-proof's kinds are figtypes).
FIGTYPE_NAMES = {"figure": "Fig.", "table": "Table", "code-block": "Listing"}


def reference_texts(app) -> dict:
    """What a cross-reference to each label shows on the site: ``(3)`` for an equation,
    ``Theorem 2``/``Fig. 4``/``Exercise 1`` for numbered blocks, the title for a section."""
    texts = {}
    for _doc, by_type in getattr(app.env, "toc_fignumbers", {}).items():
        for figtype, numbers in by_type.items():
            for node_id, number in numbers.items():
                num = ".".join(map(str, number))
                if figtype == "displaymath":
                    texts[node_id.removeprefix("equation-")] = f"({num})"
                else:
                    name = FIGTYPE_NAMES.get(figtype, figtype.split(":")[-1].capitalize())
                    texts[node_id] = f"{name} {num}"
    for label, (_doc, number) in app.env.get_domain("math").equations.items():
        texts.setdefault(label, f"({number})")
    for label, entry in app.env.get_domain("std").labels.items():
        if len(entry) > 2 and entry[2]:
            texts.setdefault(label, entry[2])
    return texts


#: The packages whose versions the download's first cell names.
CHECKED_WITH = ("numpy", "matplotlib", "ipywidgets")
COLAB = "https://colab.research.google.com"


def checked_with() -> str:
    """``Python 3.11, numpy 2.4.6, ...``: what this build ran the chapters with."""
    return ", ".join([f"Python {platform.python_version()}"]
                     + [f"{name} {metadata.version(name)}" for name in CHECKED_WITH])


def colab_url(repository_url: str, branch: str, source: str) -> str:
    """Colab's address of ``source`` (``book/masks.ipynb``, under ``_sources/``) on ``branch``
    of a GitHub repository; empty for another host.

    >>> colab_url("https://github.com/o/r", "gh-pages", "book/masks.ipynb")
    'https://colab.research.google.com/github/o/r/blob/gh-pages/_sources/book/masks.ipynb'
    """
    found = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?", repository_url)
    if not found:
        return ""
    return f"{COLAB}/github/{found[1]}/{found[2]}/blob/{branch}/_sources/{source}"


def add_colab_button(app, pagename, templatename, context, doctree):
    """Offer the page's executed notebook in Colab, in the theme's launch menu."""
    source = context.get("ipynb_source")
    repo = (app.config.html_theme_options or {}).get("repository_url", "")
    url = colab_url(repo, app.config.book_pages_branch, source) if source else ""
    groups = [b for b in context.get("header_buttons", [])
              if b.get("label") == "launch-buttons"]
    if url and groups:
        groups[0]["buttons"].insert(1, {
            "type": "link", "text": "Colab", "tooltip": "Open this notebook in Colab",
            "icon": "_static/images/logo_colab.png", "url": url})


def rewrite_notebook_download(app, pagename, templatename, context, doctree):
    """Turn the theme's copy of the executed notebook into a portable download."""
    source = context.get("ipynb_source")
    if not source or app.builder.format != "html":
        return
    path = Path(app.outdir) / "_sources" / source
    if not path.exists():
        return
    nb = with_cached_outputs(app, nbformat.read(path, as_version=4))
    repo = (app.config.html_theme_options or {}).get("repository_url", "")
    page_url = context.get("pageurl") or ""
    nb = export_notebook(nb, source_name=str(app.env.doc2path(pagename, base=False)),
                         repository_url=repo, page_url=page_url, labels=reference_texts(app),
                         include_dir=Path(app.env.doc2path(pagename)).parent,
                         checked_with=checked_with())
    nbformat.validate(nb)
    nbformat.write(nb, path)


def setup(app):
    # after sphinx-book-theme's launch buttons (priority 501) copied the notebook
    app.add_config_value("book_pages_branch", "gh-pages", "html")
    app.connect("html-page-context", rewrite_notebook_download, priority=600)
    app.connect("html-page-context", add_colab_button, priority=600)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
