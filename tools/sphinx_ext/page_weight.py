"""Sphinx extension: a lighter page.

* the theme's Font Awesome script (1.5 MB, every icon) is cut down to the icons the site uses,
  its web fonts to the glyphs the CSS uses, its CSS to the rules of icons the site uses;
* pages other than the search page do not load the search index (the theme loads it for a
  search-as-you-type box that is off), nor sphinx-design's files unless they use one of its
  components;
* figure PNGs get a palette;
* myst-nb's embedded ipywidgets state is dropped from every page with a live widget: the site
  shows each control's explorable HTML face, nothing reads the state, and it is page weight;
* a repeated inline script is removed (sphinx-thebe's config arrives twice in Jupyter Book
  1.0.4, and the second copy throws a SyntaxError in the reader's console);
* highlighted code keeps only the spans that colour something: Pygments wraps every name,
  punctuation mark and space in a span (a third of a chapter page's elements), and the
  theme's styles give those three classes the code's own colour, light and dark.
"""

from __future__ import annotations

import re
from pathlib import Path

from offline_math import MATHJAX_DIR


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


#: Pygments classes whose colour is the code block's own in both of the theme's styles (names,
#: punctuation, whitespace): their spans change nothing the reader sees. A test checks the
#: built pygments.css against this list.
PLAIN_TOKENS = ("n", "p", "w")
#: A highlighted block, and a plain token's span inside it (Pygments' spans do not nest).
HIGHLIGHT = re.compile(r'<div class="highlight"><pre>.*?</pre></div>', re.DOTALL)
PLAIN_SPAN = re.compile(r'<span class="(?:' + "|".join(PLAIN_TOKENS) + r')">([^<]*)</span>')


def plain_code_spans(app, pagename, templatename, context, doctree):
    """Unwrap the spans of :data:`PLAIN_TOKENS` in the page's highlighted code."""
    body = context.get("body")
    if isinstance(body, str) and '<div class="highlight">' in body:
        context["body"] = HIGHLIGHT.sub(lambda m: PLAIN_SPAN.sub(r"\1", m.group(0)), body)


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


#: One icon in Font Awesome's packs: ``name:[width,height,[aliases],"unicode",path]``.
FA_ICON = re.compile(r'(?:"([\w-]+)"|([\w$]+)):\[\d+,\d+,\[([^\]]*)\],"[0-9a-f]+",'
                     r'(?:"[^"]*"|\[[^\]]*\])\]')


#: The start of each pack's literal in the theme's ``fontawesome.js``.
FA_PACK = re.compile(r"var p=\{")


def fontawesome_scripts(site: Path) -> list[Path]:
    """The theme's Font Awesome script: ``scripts/fontawesome.js`` (pydata-sphinx-theme 0.16
    and later) or ``vendor/fontawesome/<version>/js/all.min.js`` (0.15)."""
    static = site / "_static"
    return [p for p in [static / "scripts" / "fontawesome.js",
                        *sorted(static.glob("vendor/fontawesome/*/js/all.min.js"))] if p.exists()]


def used_icons(site: Path) -> set[str]:
    """Every ``fa-<name>`` class in the site's pages and in its scripts (the theme's, the
    extensions': any may set an icon's class)."""
    names, fa = set(), set(fontawesome_scripts(site))
    scripts = [p for p in (site / "_static").rglob("*.js") if MATHJAX_DIR not in p.parts]
    for path in [*site.rglob("*.html"), *scripts]:
        if path not in fa:
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
    """Rewrite the theme's Font Awesome script with only the icons the site uses (the code
    that turns ``<i class="fa-...">`` into inline SVG stays as it is)."""
    keep = used_icons(site)
    for path in fontawesome_scripts(site):
        subset_script(path, keep)


def subset_script(path: Path, keep: set[str]) -> None:
    """Rewrite one Font Awesome script's icon packs to the icons in ``keep``."""
    text = path.read_text()
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
    path.with_name(path.name + ".map").unlink(missing_ok=True)


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


def rewrite_pages(site: Path, edit, skip: tuple[str, ...] = ()) -> None:
    """Apply ``edit`` (text → text) to every page of the built site but those named in
    ``skip``; write back only the pages it changes."""
    for page in site.rglob("*.html"):
        if page.name in skip:
            continue
        text = page.read_text(encoding="utf-8")
        new = edit(text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def drop_search_scripts(app, site: Path) -> None:
    """Pages other than the search page load no search scripts unless search-as-you-type is
    on (the theme's search box sends the reader to ``search.html``, which loads its own)."""
    if not (app.config.html_theme_options or {}).get("search_as_you_type"):
        rewrite_pages(site, lambda text: SEARCH_SCRIPTS.sub("", text), skip=("search.html",))


#: pydata-sphinx-theme 0.15's preloads of the Font Awesome web fonts, in every page's head.
FONT_PRELOAD = re.compile(r'\s*<link rel="preload" as="font"[^>]*fontawesome[^>]*>')


def drop_font_preloads(site: Path) -> None:
    """Pages do not preload the icon fonts: the icons are the script's inline SVG, the fonts
    draw only a few CSS icons (and are cut to those glyphs, as WOFF, by
    :func:`subset_icon_fonts`); a preload of a font from a file URL is a CORS error."""
    rewrite_pages(site, lambda text: FONT_PRELOAD.sub("", text))


def css_glyphs(css: str, icons: set[str]) -> set[int]:
    """The icon-font code points ``css`` may draw: every one it names (in rules, custom
    properties such as ``--pst-icon-admonition-note``), except in Font Awesome's rules for
    icon classes (``.fa-x:before``) that no page uses."""
    codes = {int(esc, 16) if esc else ord(raw)
             for esc, raw in CSS_GLYPH.findall(prune_icon_rules(css, icons))}
    return {c for c in codes if c >= 0xE000}


#: The theme's Font Awesome web fonts (0.16 and later; 0.15 keeps them under a version folder).
FA_FONTS = ("_static/vendor/fontawesome/webfonts", "_static/vendor/fontawesome/*/webfonts")


def subset_icon_fonts(site: Path) -> None:
    """Cut the theme's Font Awesome web fonts (used by CSS icons: admonitions, theorem boxes)
    to the glyphs its CSS names, as WOFF (zlib; WOFF2 would need brotli), and point the
    theme's ``@font-face`` rules at them."""
    from fontTools import subset

    css_files = list((site / "_static").rglob("*.css"))
    icons = used_icons(site)
    codes = set().union(*(css_glyphs(css.read_text(), icons) for css in css_files))
    fonts = [f for pattern in FA_FONTS for f in sorted(site.glob(pattern + "/*.woff2"))
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
        drop_font_preloads(site)
        quantize_images(site)


def setup(app):
    # before myst-nb's own html-page-context handler (priority 500) adds the state
    app.connect("html-page-context", strip_widget_state, priority=400)
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.connect("html-page-context", drop_unused_design, priority=900)
    app.connect("html-page-context", plain_code_spans, priority=900)
    app.connect("build-finished", lighten_site)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
