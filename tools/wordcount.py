"""How long a chapter is to read: its core path and its whole text, counted from the built page.

The **core path** is the prose a student reads straight through: every word of the page's
article except code cells and their outputs, display math, "Going deeper" blocks (admonitions
with the class ``going-deeper`` and sections whose heading starts "Going deeper"), exercises
and their solutions (and the "Exercises" section). Inline math counts as one word. The
**total** adds back the Going deeper blocks and the exercises, still without code, outputs or
display math. Reading time is at a mathematics pace, :data:`WORDS_PER_MINUTE`.

The **visible path** is what a web reader meets without opening anything, and its minutes are
what the opening box promises (:func:`count_visible`): the core prose (captions and prediction
boxes included) outside anything folded, plus every code cell whose input the page shows
(counted as its identifiers and numbers, :data:`CODE_TOKEN`) and every output it shows
(its words). Folded parts (hidden inputs, folded outputs and cells, dropdowns), Going deeper
and the exercises are left out. Budget: :data:`VISIBLE_BUDGET_MINUTES`.

Usage (from the project root)::

    .venv/bin/python tools/wordcount.py book/masks.md           # builds that page alone first
    .venv/bin/python tools/wordcount.py _build/html/book/*.html # pages of a built site

For a ``.md`` chapter it uses ``_build/html/book/<name>.html`` when that page is newer than the
chapter, and otherwise builds the chapter alone (``jupyter-book build book/<name>.md``, into
``_build/_page``), which executes it. A page built alone can count a little lower than the
site's (no numbered references); the test reads the site's.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, Tag

ROOT = Path(__file__).resolve().parents[1]
#: Reading pace for mathematical prose, in words per minute.
WORDS_PER_MINUTE = 130
#: The budget of a chapter's core path, in words.
CORE_BUDGET = 3500
#: The budget of a chapter's visible path (prose, visible code and outputs), in minutes.
VISIBLE_BUDGET_MINUTES = 35
#: What a reader reads of code: identifiers (names, keywords, words of comments) and numbers.
CODE_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
#: Folded on the page: closed <details> (hidden inputs, folded outputs and cells) and dropdowns.
FOLDED = ["details", "div.dropdown", "div.toggle-hidden"]
#: Elements that are never prose: code cells with their outputs, display math, page chrome.
NEVER = ["div.cell", "div.math", "script", "style", "a.headerlink", "div.bibliography",
         "span.math.nohighlight.display"]
#: Elements that are prose, but off the core path.
OFF_CORE = ["div.going-deeper", "div.exercise", "div.solution", "details.going-deeper"]
#: Embedded pictures (figures and controls' sprites, as data URLs).
EMBEDDED = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")
#: Section headings whose whole section is off the core path.
OFF_CORE_HEADING = re.compile(r"^\s*(?:[\d.]+\s+)?(going deeper|exercises)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Count:
    """Words of one page: its core path and its whole prose."""

    core: int
    total: int

    @property
    def minutes(self) -> float:
        """Reading time of the core path at :data:`WORDS_PER_MINUTE`."""
        return self.core / WORDS_PER_MINUTE


def words(node: Tag) -> int:
    """Whitespace-separated words in the text of ``node``."""
    return len(node.get_text(" ").split())


def article(html: str) -> Tag:
    """The page's article (its content, without navigation, header or footer)."""
    # embedded pictures hold no words, and are most of a page with controls: parse without them
    soup = BeautifulSoup(EMBEDDED.sub("data:", html), "html.parser")
    found = soup.select_one("article.bd-article") or soup.select_one("main") or soup.body
    if found is None:
        raise ValueError("no article, main or body element in the page")
    return found


def off_core_sections(root: Tag) -> list[Tag]:
    """The ``<section>`` elements whose own heading starts "Going deeper" or "Exercises"."""
    found = []
    for section in root.find_all("section"):
        heading = section.find(re.compile(r"^h[1-6]$"))
        if heading is None:
            continue
        # the site numbers its sections ("1.9. Going deeper"): read the title after the number
        title = re.sub(r"^\s*(?:\d+\.)+\s*", "", heading.get_text(" "))
        if OFF_CORE_HEADING.match(title):
            found.append(section)
    return found


def count_html(html: str) -> Count:
    """Core and total prose words of a built page (see the module docstring).

    >>> page = ('<article class="bd-article"><section><h1>Title here</h1><p>one two three</p>'
    ...         '<div class="cell"><pre>x = 1</pre></div><div class="math">\\\\[a+b\\\\]</div>'
    ...         '<div class="admonition going-deeper"><p>deep words</p></div></section>'
    ...         '<section><h2>Exercises</h2><p>do this</p></section></article>')
    >>> count_html(page)
    Count(core=5, total=10)
    """
    root = prose_root(html, NEVER)
    total = words(root)
    remove([n for sel in OFF_CORE for n in root.select(sel)] + off_core_sections(root))
    return Count(core=words(root), total=total)


def prose_root(html: str, never: list[str]) -> Tag:
    """The page's article without the elements ``never`` selects, inline math as one word."""
    root = article(html)
    remove([n for sel in never for n in root.select(sel)])
    for node in root.select("span.math"):  # inline math reads as one word, whatever its TeX
        node.replace_with(" x ")
    return root


def remove(nodes: list[Tag]) -> None:
    """Take ``nodes`` out of their page (those already removed with an enclosing one aside)."""
    for node in nodes:
        if node.parent is not None:
            node.decompose()


@dataclass(frozen=True)
class Visible:
    """Words a web reader meets without opening anything: prose, code (as tokens), outputs."""

    prose: int
    code: int
    output: int

    @property
    def words(self) -> int:
        return self.prose + self.code + self.output

    @property
    def minutes(self) -> float:
        """Reading time of the visible path at :data:`WORDS_PER_MINUTE`."""
        return self.words / WORDS_PER_MINUTE


def count_visible(html: str) -> Visible:
    """The visible path of a built page (see the module docstring).

    >>> page = ('<article class="bd-article"><section><h1>Title here</h1><p>one two</p>'
    ...         '<div class="cell"><div class="cell_input"><pre>x = f(1.5)  # say</pre></div>'
    ...         '<div class="cell_output"><pre>2.5 done</pre></div></div>'
    ...         '<div class="cell"><details class="hide above-input"><pre>y = 2</pre></details>'
    ...         '<div class="cell_output"><pre>shown</pre></div></div>'
    ...         '<div class="cell"><details class="hide"><pre>z = 3</pre></details></div>'
    ...         '<div class="admonition going-deeper"><p>deep words</p></div></section>'
    ...         '<section><h2>Exercises</h2><p>do this</p><div class="cell">'
    ...         '<div class="cell_input"><pre>w = 4</pre></div></div></section></article>')
    >>> count_visible(page)
    Visible(prose=4, code=4, output=3)
    """
    root = prose_root(html, [sel for sel in NEVER if sel != "div.cell"])
    remove([n for sel in OFF_CORE + FOLDED for n in root.select(sel)] + off_core_sections(root))
    code = output = 0
    for cell in root.select("div.cell"):
        for block in cell.select("div.cell_input"):
            code += len(CODE_TOKEN.findall(block.get_text(" ")))
        for block in cell.select("div.cell_output"):
            output += words(block)
        cell.decompose()
    return Visible(prose=words(root), code=code, output=output)


def built_page(chapter: Path) -> Path:
    """The built HTML of ``book/<name>.md``: the site's, if fresh, or the chapter built alone."""
    site_page = ROOT / "_build" / "html" / chapter.resolve().relative_to(ROOT).with_suffix(".html")
    if site_page.exists() and site_page.stat().st_mtime >= chapter.stat().st_mtime:
        return site_page
    jb = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jb), "build", str(chapter), "--builder", "html", "--quiet"],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    # jupyter-book names the folder after the page's path: _build/_page/book-<name>/html
    pages = sorted((ROOT / "_build" / "_page").glob(f"*{chapter.stem}/html/{chapter.stem}.html"))
    if not pages:
        raise FileNotFoundError(f"building {chapter} alone wrote no {chapter.stem}.html")
    return pages[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+", type=Path, help="book/<name>.md or built .html pages")
    args = parser.parse_args(argv)
    print(f"{'page':<28} {'prose':>6} {'code':>6} {'output':>6} {'visible min':>11}"
          f" {'core':>6} {'total':>6}   budgets: {VISIBLE_BUDGET_MINUTES} min, {CORE_BUDGET} core")
    over = False
    for path in args.pages:
        page = built_page(path) if path.suffix == ".md" else path
        html = page.read_text(encoding="utf-8")
        count, seen = count_html(html), count_visible(html)
        flag = ("  OVER" if count.core > CORE_BUDGET or seen.minutes > VISIBLE_BUDGET_MINUTES
                else "")
        over |= bool(flag)
        print(f"{path.stem:<28} {seen.prose:>6} {seen.code:>6} {seen.output:>6} "
              f"{seen.minutes:>11.0f} {count.core:>6} {count.total:>6}{flag}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
