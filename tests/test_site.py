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
    site = built_site()
    icons = site / "_static" / "scripts" / "fontawesome.js"
    assert icons.stat().st_size < 200_000, f"fontawesome.js is {icons.stat().st_size} bytes"
    assert not (site / "_static" / "mathjax" / "tex-mml-chtml.js").exists()
    for page in page_names():
        html = (site / page).read_text()
        assert "favicon" in html, f"{page} has no favicon link (the browser asks for a 404)"
