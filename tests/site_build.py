"""The built website, shared by the browser and download tests.

The site is built once per test session, exactly as ``make html`` does (into ``_build``; the
execution cache makes a rebuild cheap), in a thread started right after collection
(``tests/conftest.py``), so that the build overlaps the tests that do not need it.
``BOOK_HTML=/path/to/_build/html`` skips the build and tests an existing site instead (handy
while developing).
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from tests.nbharness import ROOT, chapter_paths, toc_files

#: Modules whose tests read the built site: collecting one of them starts the build.
USERS = ("tests/test_site.py", "tests/test_browser.py", "tests/test_downloads.py",
         "tests/test_structure.py", "tests/test_clean_install.py")
_lock = threading.Lock()
_future: concurrent.futures.Future | None = None


def start() -> None:
    """Start the build in a thread of its own, once (see :func:`build`)."""
    global _future
    with _lock:
        if _future is None:
            _future = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="site-build").submit(_build)


def build() -> tuple[Path, str]:
    """The site's folder and the build's log. Built once per session, strict, into ``_build``;
    with ``BOOK_HTML`` set, that site and an empty log."""
    start()
    return _future.result()


def _build() -> tuple[Path, str]:
    if os.environ.get("BOOK_HTML"):
        return Path(os.environ["BOOK_HTML"]).resolve(), ""
    jb = Path(sys.executable).with_name("jupyter-book")
    # as `make html`: the chapters side by side into the build's cache, then the build
    subprocess.run([sys.executable, str(ROOT / "tools" / "execute.py")], cwd=ROOT, check=True,
                   capture_output=True)
    proc = subprocess.run([str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n",
                           "--keep-going"], capture_output=True, text=True, cwd=ROOT)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed:\n{log[-5000:]}")
    return ROOT / "_build" / "html", log


def download_links(page_html: str) -> list[str]:
    """The local ``.ipynb`` links of a page (its download menu)."""
    return re.findall(r'href="(?!https?:)([^"]+\.ipynb)"', page_html)


def downloaded_notebook(site: Path, chapter: str) -> Path:
    """The ``.ipynb`` that ``<chapter>.html``'s download menu offers (``chapter``: ``book/x``)."""
    page = site / f"{chapter}.html"
    links = download_links(page.read_text(encoding="utf-8"))
    if not links:
        raise AssertionError(f"{chapter}.html offers no .ipynb download")
    return (page.parent / links[0]).resolve()


def built_site() -> Path:
    """The built site's folder (see :func:`build`)."""
    return build()[0]


def page_names() -> list[str]:
    """Every page of the book, as its path relative to the site root (``book/intro.html``)."""
    return [str(p.relative_to(ROOT).with_suffix(".html")) for p in toc_files()]


def chapter_names() -> list[str]:
    """The executable chapters, as paths relative to the repository (``book/x``)."""
    return [str(p.relative_to(ROOT).with_suffix("")) for p in chapter_paths()]
