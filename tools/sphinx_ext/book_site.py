"""Sphinx extension: the book's website works offline, and its notebook downloads open anywhere.

Registered in ``_config.yml`` under ``sphinx.local_extensions``. For the HTML builder it

* **self-hosts MathJax 3**: the files come from the ``django-static-mathjax`` wheel (MathJax
  3.2.2's ``es5`` build, pinned in ``requirements.txt``; it has no Django dependency), are
  copied to ``_static/mathjax/`` and ``mathjax_path`` points at them, so math typesets with no
  internet. Only the components a page needs are loaded (TeX in, CommonHTML out, hidden
  MathML for screen readers, no menu), and typesetting is lazy: an equation is typeset when
  it comes near the screen, so the first screen's math is ready soon after the load;
* **a lighter page**: the theme's Font Awesome script (1.5 MB, every icon) is cut down to the
  icons the site uses, its web fonts to the glyphs the CSS uses, its CSS to the rules of
  icons the site uses; pages other than the search page do not load the search index (the
  theme loads it for a search-as-you-type box that is off), nor sphinx-design's files unless
  they use one of its components; figure PNGs get a palette;
  a favicon (no 404); the theme's colour mode defaults to ``auto`` (no
  "invalid theme mode" error in the console);
* **for phones and screen readers** (``book/_static/book.css`` and ``book.js``): display
  equations that do not fit scroll inside their box with a visible cue, control figures and
  figures keep a legible size (their box scrolls on a narrow screen), the inputs of a control
  stack with each label beside its value, skip links lead to each control, links in theorem
  and exercise boxes have enough contrast, and the search results show math as text;
  citations are list items of the references list (valid ARIA);
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

import re
import shutil
from pathlib import Path

import nbformat
from notebook_export import export_notebook

#: Where MathJax goes, relative to the site's ``_static`` folder.
MATHJAX_DIR = "mathjax"
MATHJAX_ENTRY = "startup.js"
#: The components the entry loads (MathJax's own names): TeX input with its common packages,
#: CommonHTML output, lazy typesetting, and hidden MathML that screen readers read.
MATHJAX_LOAD = ["input/tex", "output/chtml", "ui/lazy", "a11y/assistive-mml"]
#: Parts of MathJax's ``es5`` build copied to the site: the entry, those components, what they
#: load at run time (the core, TeX extensions by autoload, the CHTML fonts).
MATHJAX_PARTS = ("startup.js", "core.js", "input/tex.js", "input/tex", "output/chtml.js",
                 "output/chtml", "ui/lazy.js", "a11y/assistive-mml.js")
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


def configure_site(app, config):
    """The book's static files, its favicon, and the theme's default colour mode."""
    config.html_static_path = [*config.html_static_path, str(STATIC_DIR)]
    if not config.html_favicon:
        config.html_favicon = str(STATIC_DIR / "favicon.svg")
    # the theme writes `localStorage.mode || "<default_mode>"`; empty, it logs an error
    config.html_context = {"default_mode": "auto", **(config.html_context or {})}


def configure_mathjax(app):
    """Load MathJax's components one by one (no menu, no MathML input) and typeset lazily.
    Runs after myst-nb has set its own MathJax options, and keeps them."""
    settings = dict(app.config.mathjax3_config or {})
    loader = dict(settings.get("loader", {}))
    loader["load"] = [*loader.get("load", []), *MATHJAX_LOAD]
    settings["loader"] = loader
    app.config.mathjax3_config = settings


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


#: sphinx-design's files, which Jupyter Book adds to every page (62 KB).
DESIGN_FILES = ("sphinx-design", "design-tabs.js")
#: A sphinx-design component in a page's body (cards, tabs, grids, buttons, badges...).
DESIGN_CLASS = re.compile(r'class="(?:[^"]*\s)?sd-')


def drop_unused_design(app, pagename, templatename, context, doctree):
    """A page with no sphinx-design component loads neither its style sheet nor its tabs
    script."""
    body = context.get("body")
    if not isinstance(body, str) or DESIGN_CLASS.search(body):
        return
    for key in ("css_files", "script_files"):
        files = context.get(key)
        if isinstance(files, list):
            files[:] = [f for f in files
                        if not any(d in (getattr(f, "filename", None) or str(f))
                                   for d in DESIGN_FILES)]


def fix_citation_roles(app, pagename, templatename, context, doctree):
    """docutils lists citations as ``role="list"`` holding ``role="doc-biblioentry"`` items,
    a role ARIA 1.2 deprecates and a list may not contain: make each entry a list item."""
    body = context.get("body")
    if isinstance(body, str) and 'role="doc-biblioentry"' in body:
        context["body"] = body.replace('role="doc-biblioentry"', 'role="listitem"')


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
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / part, dest / part)
    licence = src.parent / "LICENSE"
    if licence.exists():
        shutil.copy2(licence, dest / "LICENSE")


#: One icon in Font Awesome's packs: ``name:[width,height,[aliases],"unicode",path]``.
FA_ICON = re.compile(r'(?:"([\w-]+)"|([\w$]+)):\[\d+,\d+,\[([^\]]*)\],"[0-9a-f]+",'
                     r'(?:"[^"]*"|\[[^\]]*\])\]')
#: The start of each pack's literal in the theme's ``fontawesome.js``.
FA_PACK = re.compile(r"var p=\{")


def used_icons(site: Path) -> set[str]:
    """Every ``fa-<name>`` class in the site's pages and in its scripts (the theme's, the
    extensions': any may set an icon's class)."""
    names = set()
    scripts = [p for p in (site / "_static").rglob("*.js") if MATHJAX_DIR not in p.parts]
    for path in [*site.rglob("*.html"), *scripts]:
        if path.name != "fontawesome.js":
            names.update(re.findall(r"fa-([a-z0-9-]+)", path.read_text(errors="ignore")))
    return names


def subset_pack(literal: str, keep: set[str]) -> str:
    """The entries of one pack's object literal whose name or an alias is in ``keep``."""
    entries = []
    for match in FA_ICON.finditer(literal):
        name = match.group(1) or match.group(2)
        aliases = set(re.findall(r'"([\w-]+)"', match.group(3)))
        if name in keep or aliases & keep:
            entries.append(match.group(0))
    return "{" + ",".join(entries) + "}"


def subset_fontawesome(site: Path) -> None:
    """Rewrite the theme's ``fontawesome.js`` with only the icons the site uses (the code that
    turns ``<i class="fa-...">`` into inline SVG stays as it is)."""
    path = site / "_static" / "scripts" / "fontawesome.js"
    if not path.exists():
        return
    text = path.read_text()
    keep = used_icons(site)
    out, at = [], 0
    for start in FA_PACK.finditer(text):
        body = start.end() - 1  # the pack literal's "{"
        depth, end = 0, body
        for end in range(body, len(text)):  # the matching "}" (paths hold no braces)
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        out += [text[at:body], subset_pack(text[body:end + 1], keep)]
        at = end + 1
    out.append(text[at:])
    path.write_text("".join(out))
    (site / "_static" / "scripts" / "fontawesome.js.map").unlink(missing_ok=True)


#: A CSS rule (selector and body), and a glyph of an icon font in CSS: ``"\f06a"``.
CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
CSS_GLYPH = re.compile(r'"\\([0-9a-f]{4,5})"|([\ue000-\uf8ff])')  # escaped, or raw (U+E000..)
#: Font Awesome's own rule for one icon class: ``.fa-bell:before``.
FA_CLASS_RULE = re.compile(r"\.fa-([a-z0-9-]+)::?before")


def prune_icon_rules(css: str, icons: set[str]) -> str:
    """``css`` without Font Awesome's rules for icon classes that no page uses
    (``.fa-bell:before{content:"\\f0f3"}``: about 2000 of them, 93 KB of the theme's CSS)."""

    def unused(match):
        names = [FA_CLASS_RULE.fullmatch(p.strip()) for p in match.group(1).split(",")]
        return "" if all(names) and not any(m.group(1) in icons for m in names) else \
            match.group(0)

    return CSS_RULE.sub(unused, css)


def prune_icon_css(site: Path) -> None:
    """Rewrite the site's style sheets without the rules of icons no page uses."""
    icons = used_icons(site)
    for css in (site / "_static").rglob("*.css"):
        text = css.read_text()
        new = prune_icon_rules(text, icons)
        if new != text:
            css.write_text(new)
            css.with_name(css.name + ".map").unlink(missing_ok=True)


#: The scripts of the theme's search-as-you-type box, which every page loads (the search
#: index alone is 64 KB) and only a page with ``search_as_you_type`` on uses.
SEARCH_SCRIPTS = re.compile(r'\s*<script src="[^"]*(?:_static/searchtools\.js|'
                            r'_static/language_data\.js|searchindex\.js)"></script>')


def drop_search_scripts(app, site: Path) -> None:
    """Pages other than the search page load no search scripts unless search-as-you-type is
    on (the theme's search box sends the reader to ``search.html``, which loads its own)."""
    if (app.config.html_theme_options or {}).get("search_as_you_type"):
        return
    for page in site.rglob("*.html"):
        if page.name == "search.html":
            continue
        text = page.read_text()
        new = SEARCH_SCRIPTS.sub("", text)
        if new != text:
            page.write_text(new)


def css_glyphs(css: str, icons: set[str]) -> set[int]:
    """The icon-font code points ``css`` may draw: every one it names (in rules, custom
    properties such as ``--pst-icon-admonition-note``), except in Font Awesome's rules for
    icon classes (``.fa-x:before``) that no page uses."""
    codes = {int(esc, 16) if esc else ord(raw)
             for esc, raw in CSS_GLYPH.findall(prune_icon_rules(css, icons))}
    return {c for c in codes if c >= 0xE000}


FA_FONTS = "_static/vendor/fontawesome/webfonts"


def subset_icon_fonts(site: Path) -> None:
    """Cut the theme's Font Awesome web fonts (used by CSS icons: admonitions, theorem boxes)
    to the glyphs its CSS names, as WOFF (zlib; WOFF2 would need brotli), and point the
    theme's ``@font-face`` rules at them."""
    from fontTools import subset

    css_files = list((site / "_static").rglob("*.css"))
    icons = used_icons(site)
    codes = set().union(*(css_glyphs(css.read_text(), icons) for css in css_files))
    fonts = [f for f in sorted((site / FA_FONTS).glob("*.woff2"))
             if f.with_suffix(".ttf").exists()] if codes else []
    for woff2 in fonts:
        options = subset.Options()
        options.flavor = "woff"
        font = subset.load_font(str(woff2.with_suffix(".ttf")), options)  # same glyphs
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codes)
        subsetter.subset(font)
        subset.save_font(font, str(woff2.with_suffix(".woff")), options)
        woff2.unlink()
    for css in css_files if fonts else []:
        text = css.read_text()
        new = re.sub(r'(fa-[a-z]+-\d+)\.woff2\)\s*format\("woff2"\)', r'\1.woff) format("woff")',
                     text)
        if new != text:
            css.write_text(new)
            css.with_name(css.name + ".map").unlink(missing_ok=True)


def quantize_images(site: Path, colors: int = 256) -> None:
    """Store the site's figure PNGs with a palette of ``colors`` (lossless to the eye: the
    figures are flat colours and anti-aliased edges), as the controls' frames are."""
    from PIL import Image

    for path in (site / "_images").glob("*.png"):
        with Image.open(path) as img:
            if img.mode == "P":
                continue
            small = img.convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT,
                                                dither=Image.Dither.NONE)
        small.save(path, format="png", optimize=True)


def lighten_site(app, exception):
    if exception is None and app.builder.format == "html":
        site = Path(app.outdir)
        subset_fontawesome(site)
        subset_icon_fonts(site)
        prune_icon_css(site)
        drop_search_scripts(app, site)
        quantize_images(site)


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
    app.connect("config-inited", configure_site)
    app.connect("builder-inited", configure_mathjax, priority=900)
    # before myst-nb's own html-page-context handler (priority 500) adds the state
    app.connect("html-page-context", strip_widget_state, priority=400)
    # after sphinx-book-theme's launch buttons (priority 501) copied the notebook
    app.connect("html-page-context", rewrite_notebook_download, priority=600)
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.connect("html-page-context", drop_unused_design, priority=900)
    app.connect("html-page-context", fix_citation_roles)
    app.connect("build-finished", copy_mathjax)
    app.connect("build-finished", lighten_site)
    app.add_js_file(None, body=THEBE_OFFLINE_JS)
    app.add_css_file("book.css")
    app.add_js_file("book.js", defer="defer")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
