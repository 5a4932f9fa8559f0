"""The website builds strictly (warnings are errors) and its pages carry what readers need."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser

import pytest

from tests.site_build import build, built_site, page_names


@pytest.fixture(scope="session")
def build_log() -> str:
    """The log of the strict build (`jupyter-book build -W -n --keep-going`, as `make html`)."""
    if os.environ.get("BOOK_HTML"):
        pytest.skip("BOOK_HTML is set: testing an existing site, whose build log is not here")
    return build()[1]


def sphinx_warnings(log: str) -> list[str]:
    return [line for line in log.splitlines() if re.search(r"\b(WARNING|ERROR): ", line)]


def test_build_has_zero_warnings(build_log):
    assert (built_site() / "index.html").exists()
    assert sphinx_warnings(build_log) == []


class PageParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.text, self._skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


@pytest.mark.parametrize("page", page_names())
def test_page_has_alt_text_and_no_errors(page):
    """A static check of every page; tests/test_browser.py checks them rendered, in Chromium."""
    path = built_site() / page
    assert path.exists(), f"{page} was not built"
    parser = PageParser()
    parser.feed(path.read_text())
    for img in parser.images:
        if "logo" in img.get("class", ""):
            continue
        assert img.get("alt", "").strip(), f"{page}: an image has no alt text: {img}"
    text = " ".join(parser.text)
    for bad in ("Traceback (most recent call last)", "Error displaying widget",
                "Exception:", "NameError", "ModuleNotFoundError"):
        assert bad not in text, f"{page} shows {bad!r}"


def test_pages_load_only_what_they_use():
    """The theme's icon script holds the icons the site shows, not all 2000 (1.5 MB); MathJax
    is loaded as separate components (no menu, no MathML input)."""
    import page_weight  # tools/sphinx_ext/

    site = built_site()
    scripts = page_weight.fontawesome_scripts(site)
    assert scripts, "the theme's Font Awesome script is not where page_weight looks for it"
    for icons in scripts:
        assert icons.stat().st_size < 200_000, f"{icons.name} is {icons.stat().st_size} bytes"
    assert not (site / "_static" / "mathjax" / "tex-mml-chtml.js").exists()
    for page in page_names():
        html = (site / page).read_text()
        assert "favicon" in html, f"{page} has no favicon link (the browser asks for a 404)"


#: The budget of one chapter page with every asset it loads, uncached (issue 13).
PAGE_BUDGET_BYTES = 2_500_000


class AssetParser(HTMLParser):
    """The local files a page asks for: scripts, style sheets, icons and images."""

    def __init__(self):
        super().__init__()
        self.assets = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        url = attrs.get("src") if tag in ("script", "img") else \
            attrs.get("href") if tag == "link" and attrs.get("rel") in ("stylesheet", "icon") \
            else attrs.get("srcset") if tag == "source" else None  # a figure's narrow drawing
        if url and not url.startswith(("data:", "http:", "https:", "#")):
            self.assets.append(url.split("?")[0].split("#")[0])


#: The MathJax fonts ordinary TeX typesets with (MathJax loads a font when a glyph needs it).
MATHJAX_FONTS = ("Main-Regular", "Main-Bold", "Main-Italic", "Math-Italic", "AMS-Regular",
                 "Size1-Regular", "Size2-Regular", "Size3-Regular", "Size4-Regular", "Zero")


def page_weight(page: str) -> tuple[int, dict]:
    """About the bytes one uncached load of ``page`` transfers, counted from files: the page,
    every local file it references, the first font of each ``@font-face`` of its style sheets
    (what a browser with WOFF fetches), and MathJax's components with the fonts of ordinary
    TeX, as the site ships them."""
    site = built_site().resolve()
    path = site / page
    parser = AssetParser()
    parser.feed(path.read_text())
    files = {(path.parent / url).resolve() for url in parser.assets}
    for css in [f for f in files if f.suffix == ".css"]:
        for face in re.findall(r"@font-face\s*\{([^}]*)\}", css.read_text()):
            url = re.search(r"url\(['\"]?([^'\")]+)", face)
            if url and not url.group(1).startswith(("data:", "http")):
                files.add((css.parent / url.group(1).split("?")[0].split("#")[0]).resolve())
    mathjax = site / "_static" / "mathjax"
    if any(mathjax in f.parents for f in files):
        files |= {f.resolve() for f in mathjax.rglob("*.js") if "extensions" not in f.parts}
        files |= {mathjax / "output" / "chtml" / "fonts" / "woff-v2" / f"MathJax_{name}.woff"
                  for name in MATHJAX_FONTS}
    sizes = {str(f.relative_to(site)): f.stat().st_size for f in files if f.exists()}
    return path.stat().st_size + sum(sizes.values()), sizes


@pytest.mark.parametrize("page", page_names())
def test_page_weight_is_within_budget(page):
    """Every page with all its assets stays under 2.5 MB (`make bench` measures the transfer
    in Chromium; this counts files, a little more than a load fetches)."""
    total, sizes = page_weight(page)
    biggest = sorted(sizes.items(), key=lambda kv: -kv[1])[:6]
    assert total < PAGE_BUDGET_BYTES, f"{page}: {total / 1e6:.2f} MB; largest: {biggest}"


def test_chapter_pages_load_no_search_index_or_unused_icons():
    """The search index loads on the search page only, and the theme's CSS keeps the rules of
    the icons the pages use, not Font Awesome's two thousand."""
    site = built_site()
    for page in page_names():
        assert "searchindex.js" not in (site / page).read_text(), page
    assert "searchindex.js" in (site / "search.html").read_text()
    css = (site / "_static" / "styles" / "pydata-sphinx-theme.css").read_text()
    rules = re.findall(r"\.fa-([a-z0-9-]+):+before", css)
    assert 0 < len(set(rules)) < 100, f"{len(set(rules))} Font Awesome icon rules"


def test_code_keeps_only_the_spans_that_colour_something():
    """The spans the site unwraps (``page_weight.PLAIN_TOKENS``) have the code's own colour in
    both of the theme's Pygments styles, and no page still has one; highlighted code is there."""
    from page_weight import PLAIN_TOKENS  # tools/sphinx_ext, on the path by conftest

    site = built_site()
    css = (site / "_static" / "pygments.css").read_text()
    for theme in ("light", "dark"):
        base = re.search(rf'html\[data-theme="{theme}"\] \.highlight {{[^}}]*color: (#\w+)', css)
        assert base, f"no base colour for the {theme} theme's code in pygments.css"
        for token in PLAIN_TOKENS:
            rule = re.search(rf'html\[data-theme="{theme}"\] \.highlight \.{token} {{([^}}]*)}}',
                             css)
            style = rule.group(1).strip() if rule else ""
            assert style in ("", f"color: {base.group(1)}"), (
                f"the {theme} theme styles .{token} ({style}): its spans colour something; "
                "take it out of PLAIN_TOKENS in tools/sphinx_ext/page_weight.py")
    coloured = 0
    for page in page_names():
        html = (site / page).read_text()
        left = re.findall(r'<span class="(?:' + "|".join(PLAIN_TOKENS) + r')">', html)
        assert not left, f"{page}: {len(left)} spans of plain code tokens left"
        coloured += html.count('<span class="k">')
    assert coloured, "no highlighted keyword on any page"


@pytest.mark.parametrize("page", page_names())
def test_every_prediction_is_asked_before_its_answer_shows(page):
    """A "Predict, then run" box sits right above the cell it asks about, and the site folds
    that cell's output behind "Show the answer" (tools/sphinx_ext/reader_pages.py): the reader
    predicts before the page answers."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((built_site() / page).read_text(encoding="utf-8"), "html.parser")
    for box in soup.select("article div.admonition.predict"):
        prompt = " ".join(box.get_text(" ").split())[:90]
        cell = box.find_next_sibling()
        assert cell is not None and "cell" in cell.get("class", []), (
            f"{page}: the code cell this prediction asks about must follow it at once: {prompt}")
        folded = [d for d in cell.find_all("details") if re.search(
            r"Show the (code and the )?answer", d.summary.get_text())]
        if cell.select_one(".cell_output .explorable"):  # a control: the reader moves it
            assert not folded, f"{page}: a control is folded away from its prediction: {prompt}"
            continue
        assert len(folded) == 1 and folded[0].find(class_="cell_output"), (
            f"{page}: the answer to this prediction is not folded: {prompt}")


class PictureParser(HTMLParser):
    """Each ``<img>`` of the page with the narrow ``<source>`` of the ``<picture>`` it is in
    (None outside one)."""

    def __init__(self):
        super().__init__()
        self.images, self._source, self._in_picture = [], None, False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "picture":
            self._in_picture, self._source = True, None
        elif tag == "source" and self._in_picture:
            self._source = attrs
        elif tag == "img":
            self.images.append((attrs, self._source if self._in_picture else None))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "picture":
            self._in_picture, self._source = False, None


@pytest.mark.parametrize("page", page_names())
def test_every_figure_too_wide_for_a_phone_has_a_narrow_drawing(page):
    """A figure whose smallest legible width (``book.js``: 9 px text of the 12.5 px drawn) is
    wider than a phone's column comes with a narrow drawing (``lib.widgets.narrow``) in a
    ``<picture>`` ``<source>`` for narrow screens, and that one fits the column legibly
    (``tools/sphinx_ext/narrow_figures.py``)."""
    import narrow_figures  # tools/sphinx_ext/

    from lib.widgets.narrow import needs_narrow

    site = built_site()
    path = site / page
    parser = PictureParser()
    parser.feed(path.read_text())
    problems = []
    for img, source in parser.images:
        src = img.get("src", "")
        if not src.endswith(".png") or "_images/" not in src:
            continue  # controls' sprites and the logo
        wide = (path.parent / src).resolve()
        width = narrow_figures.png_size(wide.read_bytes()[:24])[0]
        if not needs_narrow(width):
            continue
        if not source or not source.get("srcset") or "max-width" not in source.get("media", ""):
            problems.append(f"{width} px wide, no narrow <source>: {img.get('alt', '')[:60]}")
            continue
        narrow = (path.parent / source["srcset"]).resolve()
        if not narrow.exists():
            problems.append(f"narrow drawing {source['srcset']} missing: {img.get('alt')[:60]}")
        elif needs_narrow(narrow_figures.png_size(narrow.read_bytes()[:24])[0]):
            problems.append(f"narrow drawing {source['srcset']} is still too wide")
    assert not problems, (
        f"{page}:\n  " + "\n  ".join(problems) + "\n(a chapter executed before lib.widgets.narrow "
        "existed has no narrow drawings in the execution cache: rm -rf _build/.jupyter_cache)")
