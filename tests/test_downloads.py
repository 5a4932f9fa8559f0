"""What the built site hands a reader besides its pages: notebooks, offline assets, status.

* Each chapter's download menu offers its executed ``.ipynb``: valid nbformat, with the outputs
  of every code cell, no MyST-only syntax left in its Markdown, no live widget views (which
  would show as dead boxes in Colab), and a first cell saying how to run it again.
* MathJax is served from the site itself, and no page embeds ipywidgets state or loads a
  script from a CDN.
* The execution-status page lists every chapter with its run time and "passed".
* The print edition (``make pdf``) drops no character: its xelatex log has no "Missing
  character" (checked when ``_build/latex`` holds a build newer than its sources, or the build
  that ``BOOK_LATEX=/path/to/_build/latex`` names), and, with no LaTeX needed, every character
  of the chapters' code and outputs is in the monospace font or in the fallback list of
  ``tools/latex/glyphfallback.sty``, whose font has it.
"""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from myst_tokens import myst_leftovers  # tools/sphinx_ext, on the path by conftest
from notebook_export import degrade_myst

from tests.nbharness import ROOT, chapter_paths, code_cells, read_chapter, reference_path
from tests.site_build import built_site, chapter_names, download_links, page_names


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
    first = nb.cells[0].source
    repo = site_config()["repository"]["url"]
    assert f'%pip install "attention-math-lib @ git+{repo}"' in first, first
    assert re.search(r"checked with Python 3\.\d+.*numpy \d", first), first


def site_config() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("chapter", chapter_names())
def test_launch_menu_opens_the_executed_notebook_in_colab(chapter):
    """"Colab" in the launch menu names this chapter's executed notebook on the branch that
    serves the site, derived from the one repository URL of ``_config.yml``."""
    config = site_config()
    owner_repo = config["repository"]["url"].removeprefix("https://github.com/")
    branch = config["sphinx"]["config"]["book_pages_branch"]
    site = built_site()
    html = (site / f"{chapter}.html").read_text(encoding="utf-8")
    links = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', html)
    assert len(links) == 1, f"{chapter}.html: {len(links)} Colab links"
    prefix = f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/"
    assert links[0].startswith(prefix), links[0]
    served = links[0].removeprefix(prefix)
    assert served == f"_sources/{chapter}.ipynb", served
    assert (site / served).is_file(), f"Colab would open {served}, which the site lacks"


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


# The print edition: `make pdf` builds it into _build/latex with xelatex and the fonts of
# _config.yml (DejaVu Serif, Sans and Sans Mono, from fonts-dejavu-core).
LATEX_DIR = Path(os.environ.get("BOOK_LATEX", ROOT / "_build" / "latex")).resolve()
FALLBACK_STY = ROOT / "tools" / "latex" / "glyphfallback.sty"
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")  # where Debian's fonts-dejavu-core puts them
STYLES = ("", "-Bold", "-Oblique", "-BoldOblique")


def missing_characters(log: str) -> dict[str, set[str]]:
    """What a xelatex log says no font had, as ``{"ℓ (U+2113)": {"DejaVu Sans Mono"}}``."""
    text = re.sub(r"(?m)^(.{79})\n", r"\1", log)  # TeX wraps its log at 79 characters
    found: dict[str, set[str]] = {}
    for char, font in re.findall(r"Missing character: There is no (.+?) in font ([^/:!\n]+)",
                                 text):
        found.setdefault(char, set()).add(font.strip())
    return found


def test_missing_characters_reads_a_wrapped_log():
    log = ("Missing character: There is no ⪰ (U+2AB0) in font DejaVu Sans Mono/OT:script=la\n"
           "tn;language=dflt;!\n"
           "Missing character: There is no ℓ (U+2113) in font DejaVu Sans Mono Oblique/OT:s\n"
           "cript=latn;language=dflt;!\n"
           "Missing character: There is no ℓ (U+2113) in font DejaVu Sans Mono/OT:script=la\n"
           "tn;language=dflt;!\n"
           "Overfull \\hbox (1.2pt too wide) in paragraph at lines 10--12\n")
    assert missing_characters(log) == {
        "⪰ (U+2AB0)": {"DejaVu Sans Mono"},
        "ℓ (U+2113)": {"DejaVu Sans Mono", "DejaVu Sans Mono Oblique"}}
    assert missing_characters("Missing character: There is no ^^e2 in font cmr10!\n") == {
        "^^e2": {"cmr10"}}
    assert missing_characters("(./attention-notes.aux)\nOutput written\n") == {}


def test_print_edition_misses_no_character():
    logs = sorted(LATEX_DIR.glob("*.log"))
    if not logs:
        pytest.skip(f"no print edition in {LATEX_DIR} (make pdf builds it; it needs LaTeX: "
                    "see CONTRIBUTING.md, \"Reading and running the chapters\")")
    if "BOOK_LATEX" not in os.environ:
        built = min(log.stat().st_mtime for log in logs)
        sources = [ROOT / "_config.yml", *ROOT.glob("book/*.md"), *ROOT.glob("tools/latex/*")]
        newer = [str(p.relative_to(ROOT)) for p in sources if p.stat().st_mtime > built]
        if newer:
            pytest.skip(f"the print edition in {LATEX_DIR} is older than {newer[0]}: "
                        "make pdf again")
    for log in logs:
        missing = missing_characters(log.read_text(errors="replace"))
        assert not missing, (
            f"{log} says xelatex dropped characters no font had: "
            + "; ".join(f"{c} in {', '.join(sorted(f))}" for c, f in sorted(missing.items()))
            + f" (add them to {FALLBACK_STY.relative_to(ROOT)})")


def code_and_outputs(nb) -> str:
    """The text the print edition sets in the monospace font: code and its text outputs."""
    parts = []
    for cell in code_cells(nb):
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", "") or out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_monospace_font_or_its_fallback_has_every_character_of_the_code():
    from fontTools.ttLib import TTFont

    files = [DEJAVU / f"DejaVu{family}{style}.ttf" for family in ("SansMono", "Sans")
             for style in STYLES]
    if not all(f.exists() for f in files):
        pytest.skip(f"no DejaVu fonts in {DEJAVU} (Debian's fonts-dejavu-core, which make pdf "
                    "uses: see CONTRIBUTING.md, \"Reading and running the chapters\")")

    def charset(name: str) -> set[int]:  # what every style of the family has
        return set.intersection(*(set(TTFont(DEJAVU / f"DejaVu{name}{s}.ttf").getBestCmap())
                                  for s in STYLES))

    mono, sans = charset("SansMono"), charset("Sans")
    fallback = set(re.findall(r"^\\GF@declare\{(.)\}", FALLBACK_STY.read_text(), re.M))
    assert fallback, f"{FALLBACK_STY} declares no character"
    assert not [c for c in fallback if ord(c) not in sans], "DejaVu Sans lacks a fallback"
    lacking: dict[str, str] = {}
    for chapter in chapter_paths():
        nb = nbformat.read(reference_path(chapter), as_version=4)
        for c in sorted(set(code_and_outputs(nb))):
            if c.isprintable() and ord(c) not in mono and c not in fallback:
                lacking.setdefault(f"{c} (U+{ord(c):04X})", chapter.stem)
    assert not lacking, (
        "DejaVu Sans Mono lacks characters of the chapters' code or outputs, which the PDF would "
        f"drop: {lacking}; add them to {FALLBACK_STY.relative_to(ROOT)}")
