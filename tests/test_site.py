"""The website builds strictly (warnings are errors) and its pages carry what readers need."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.nbharness import ROOT, toc_files

HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def build_log() -> str:
    """Build the site once per session, exactly as `make html` does."""
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n",
                           "--keep-going"], capture_output=True, text=True, cwd=ROOT)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"jupyter-book build failed:\n{log[-5000:]}"
    return log


def sphinx_warnings(log: str) -> list[str]:
    return [line for line in log.splitlines() if re.search(r"\b(WARNING|ERROR): ", line)]


def test_build_has_zero_warnings(build_log):
    assert (HTML / "index.html").exists()
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


def pages():
    return [HTML / (p.relative_to(ROOT).with_suffix(".html")) for p in toc_files()]


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.stem)
def test_page_has_alt_text_and_no_errors(build_log, page):
    assert page.exists(), f"{page} was not built"
    parser = PageParser()
    parser.feed(page.read_text())
    for img in parser.images:
        if "logo" in img.get("class", ""):
            continue
        assert img.get("alt", "").strip(), f"{page.name}: an image has no alt text: {img}"
    text = " ".join(parser.text)
    for bad in ("Traceback (most recent call last)", "Error displaying widget",
                "Exception:", "NameError", "ModuleNotFoundError"):
        assert bad not in text, f"{page.name} shows {bad!r}"
