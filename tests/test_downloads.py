"""What the built site hands a reader besides its pages: notebooks, offline assets, status.

* Each chapter's download menu offers its executed ``.ipynb``: valid nbformat, with the outputs
  of every code cell, no MyST-only syntax left in its Markdown, no live widget views (which
  would show as dead boxes in Colab), and a first cell saying how to run it again.
* MathJax is served from the site itself, and no page embeds ipywidgets state or loads a
  script from a CDN.
* The execution-status page lists every chapter with its run time and "passed".
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import nbformat
import pytest
from myst_tokens import myst_leftovers  # tools/sphinx_ext, on the path by conftest
from notebook_export import degrade_myst

from tests.nbharness import ROOT, read_chapter
from tests.site_build import built_site, chapter_names, page_names


def download_links(page_html: str) -> list[str]:
    return re.findall(r'href="([^"]+\.ipynb)"', page_html)


@pytest.mark.parametrize("chapter", chapter_names())
def test_chapter_offers_its_executed_notebook(chapter):
    site = built_site()
    page = site / f"{chapter}.html"
    links = download_links(page.read_text())
    assert links, f"{chapter}.html offers no .ipynb download"
    path = (page.parent / links[0]).resolve()
    assert path.exists(), f"the download link {links[0]} of {chapter}.html is broken"

    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)  # what Colab and Jupyter require
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    assert "widgets" not in nb.metadata and "jupytext" not in nb.metadata

    source = read_chapter(ROOT / f"{chapter}.md")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.source for c in code] == [c.source for c in source.cells
                                        if c.cell_type == "code"], "code cells differ"
    # every code cell ran; every cell that prints or draws has its output in the file
    assert all(c.execution_count for c in code), "a code cell was not executed"
    assert any(c.outputs for c in code), "the notebook has no outputs"
    for cell in code:
        for out in cell.outputs:
            assert out.output_type != "error", f"an error output in {chapter}: {out}"
            assert "application/vnd.jupyter.widget-view+json" not in out.get("data", {})
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        leftovers = myst_leftovers(cell.source)
        assert not leftovers, f"{chapter}.ipynb keeps MyST-only syntax: {leftovers}"
    assert nb.cells[0].metadata.get("book_export"), "no note on how to run the notebook"


def test_myst_degrades_to_plain_markdown():
    text = degrade_myst(
        "(thm-a)=\n```{prf:theorem} Sum rule\n:label: thm-a\n\nIf {math}`a` then $b$, "
        "see {eq}`eq-1` and {cite}`vaswani2017attention`.\n```\n\n"
        "$$ x = 1 $$ (eq-1)\n\n::::{solution} ex-1\n:class: dropdown\nDo it.\n:::{note}\n"
        "Inner.\n:::\n::::\n\n% hidden comment\n"
    )
    assert "> **Theorem (Sum rule).**" in text
    assert "If $a$ then $b$, see (eq-1) and [vaswani2017attention]." in text
    assert "$$ x = 1 $$\n" in text
    assert "<details><summary>Solution</summary>" in text and "> **Note.**" in text
    assert "{" not in text.replace("{math}", "") and "hidden comment" not in text
    assert "(thm-a)=" not in text and ":label:" not in text


def test_degrading_keeps_code_lists_and_tables_as_written():
    text = degrade_myst(
        "- an item:\n\n  ```{note}\n  With {math}`x^2`.\n  ```\n- and `{ref}`code`` stays\n\n"
        "| a | b |\n| --- | --- |\n| {math}`1` | {eq}`eq-1` |\n\nA role over\nlines "
        "{ref}`the text\n<sec-a>`.\n", labels={"eq-1": "(1)"})
    assert "  > **Note.**\n  >\n  > With $x^2$.\n" in text
    assert "- and `{ref}`code`` stays" in text and "| $1$ | (1) |" in text
    assert "A role over\nlines the text." in text


def test_a_literalinclude_becomes_the_code_of_its_file(tmp_path):
    (tmp_path / "prog.py").write_text("print('hi')\n")
    text = degrade_myst("Listing:\n\n```{literalinclude} prog.py\n:language: python\n```\n",
                        include_dir=tmp_path)
    assert "```python\nprint('hi')\n```" in text and "literalinclude" not in text


def test_myst_leftovers_are_what_the_myst_parser_reads_as_myst():
    found = [what for what, _ in myst_leftovers(
        "(sec-a)=\n# A\n\n```{note}\nx\n```\n\n:::{tip}\ny\n:::\n\nSee {ref}`sec-a`.\n\n"
        "$$ x $$ (eq-1)\n\n% a comment\n")]
    assert found == ["a MyST target", "a MyST directive", "a MyST directive", "a MyST role",
                     "an equation label", "a MyST comment"]
    assert myst_leftovers("Code `{ref}`x`` and\n\n```python\n{ref}`y`\n```\n\n$a$.\n") == []


class Table(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self._row, self._cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_status_page_lists_every_chapter_as_passed():
    site = built_site()
    assert "book/status.html" in page_names(), "book/status.md is not in _toc.yml"
    parser = Table()
    parser.feed((site / "book" / "status.html").read_text())
    header, *rows = parser.rows
    assert header == ["Document", "Modified", "Method", "Run Time (s)", "Status"]
    by_doc = {row[0]: row for row in rows}
    for chapter in chapter_names():
        assert chapter in by_doc, f"{chapter} is missing from the status page"
        _, modified, _, runtime, status = by_doc[chapter]
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", modified), modified
        assert float(runtime) >= 0 and status == "passed", by_doc[chapter]


def test_offline_assets_are_in_the_site():
    site = built_site()
    mathjax = site / "_static" / "mathjax"
    assert (mathjax / "startup.js").exists(), "MathJax is not self-hosted"
    assert list((mathjax / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    for page in page_names():
        html = (site / page).read_text()
        assert "application/vnd.jupyter.widget-state+json" not in html, (
            f"{page} embeds ipywidgets state (dead weight: the site shows the HTML faces)")
        for script in re.findall(r'<script[^>]+src="([^"]+)"', html):
            assert not script.startswith(("http:", "https:", "//")), (
                f"{page} loads {script} from another host")
        if '<span class="math' in html or '<div class="math' in html:
            assert "_static/mathjax/startup.js" in html, f"{page}: no local MathJax"
