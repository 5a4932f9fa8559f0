"""Sphinx extension: each chapter's executed notebook, as a download that opens anywhere.

sphinx-book-theme copies each chapter's executed notebook (``jupyter_execute/<page>.ipynb``)
to ``_sources/<page>.ipynb`` and offers it in the download menu; this extension rewrites that
copy for readers outside the book (Colab, plain Jupyter): MyST-only syntax becomes plain
Markdown (:mod:`notebook_export`), widget views and widget state are dropped (the HTML face
and the PNG stay), and a first cell says where it comes from and how to re-run it.
"""

from __future__ import annotations

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
                         include_dir=Path(app.env.doc2path(pagename)).parent)
    nbformat.validate(nb)
    nbformat.write(nb, path)


def setup(app):
    # after sphinx-book-theme's launch buttons (priority 501) copied the notebook
    app.connect("html-page-context", rewrite_notebook_download, priority=600)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
