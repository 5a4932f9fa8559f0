"""Sphinx extension: the book's website works offline, and its notebook downloads open anywhere.

Registered in ``_config.yml`` under ``sphinx.local_extensions``. For the HTML builder it

* **self-hosts MathJax 3**: the files come from the ``django-static-mathjax`` wheel (MathJax
  3.2.2's ``es5`` build, pinned in ``requirements.txt``; it has no Django dependency), are
  copied to ``_static/mathjax/`` and ``mathjax_path`` points at them, so math typesets with no
  internet;
* **drops the ipywidgets state** that myst-nb would embed in every page with a live widget: the
  site shows each control's explorable HTML face, nothing reads the state, and it is page weight;
* **words the execution-status table** (book/status.md): "passed"/"failed" instead of emoji;
* **removes a duplicated inline script** (sphinx-thebe's config, a console error otherwise);
* **explains Thebe offline**: live code loads Thebe from a CDN only when the reader clicks
  *Live Code*; with no network the button says so instead of hanging on "Loading...";
* **prepares the executed notebook download**: sphinx-book-theme copies each chapter's executed
  notebook (``jupyter_execute/<page>.ipynb``) to ``_sources/<page>.ipynb`` and offers it in the
  download menu; this extension rewrites that copy for readers outside the book (Colab, plain
  Jupyter): MyST-only syntax becomes plain Markdown (:mod:`notebook_export`), widget views and
  widget state are dropped (the HTML face and the PNG stay), and a first cell says where it
  comes from and how to re-run it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from notebook_export import export_notebook

#: Where MathJax goes, relative to the site's ``_static`` folder.
MATHJAX_DIR = "mathjax"
MATHJAX_ENTRY = "tex-mml-chtml.js"
#: Parts of MathJax's ``es5`` build that ``tex-mml-chtml.js`` may load at run time (TeX
#: extensions by autoload, the CHTML fonts, the context menu's accessibility tools).
MATHJAX_PARTS = ("tex-mml-chtml.js", "input", "output/chtml", "a11y", "ui", "sre", "adaptors")

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


def mathjax_source() -> Path:
    """The ``es5`` folder of the MathJax copy installed with ``django-static-mathjax``."""
    import mathjax  # the django-static-mathjax wheel's package: static files only

    path = Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5"
    if not (path / MATHJAX_ENTRY).exists():
        raise FileNotFoundError(f"MathJax not found at {path}: pip install -r requirements.txt")
    return path


def set_mathjax_path(app, config):
    if config.mathjax_path.startswith(("http://", "https://")):
        config.mathjax_path = f"{MATHJAX_DIR}/{MATHJAX_ENTRY}"


def strip_widget_state(app, pagename, templatename, context, doctree):
    """Remove myst-nb's embedded ipywidgets state before myst-nb adds it to the page."""
    meta = getattr(app.env, "nb_metadata", {}).get(pagename, {})
    js_files = meta.get("js_files", {})
    for key in [k for k in js_files if k.startswith("ipywidgets")]:
        js_files.pop(key)


def dedupe_scripts(app, pagename, templatename, context, doctree):
    """Drop repeated inline scripts (sphinx-thebe's ``const THEBE_JS_URL`` arrives twice in
    Jupyter Book 1.0.4 and the second copy throws a SyntaxError in the reader's console)."""
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen, kept = set(), []
    for js in scripts:
        attrs = getattr(js, "attributes", {}) or {}
        key = (getattr(js, "filename", str(js)) or "", tuple(sorted(attrs.items())))
        if key not in seen:
            seen.add(key)
            kept.append(js)
    scripts[:] = kept


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


def copy_mathjax(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    src = mathjax_source()
    dest = Path(app.outdir) / "_static" / MATHJAX_DIR
    for part in MATHJAX_PARTS:
        if (src / part).is_dir():
            shutil.copytree(src / part, dest / part, dirs_exist_ok=True)
        else:
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / part, dest / part)
    licence = src.parent / "LICENSE"
    if licence.exists():
        shutil.copy2(licence, dest / "LICENSE")


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
    app.connect("config-inited", set_mathjax_path)
    # before myst-nb's own html-page-context handler (priority 500) adds the state
    app.connect("html-page-context", strip_widget_state, priority=400)
    # after sphinx-book-theme's launch buttons (priority 501) copied the notebook
    app.connect("html-page-context", rewrite_notebook_download, priority=600)
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.connect("build-finished", copy_mathjax)
    app.add_js_file(None, body=THEBE_OFFLINE_JS)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
