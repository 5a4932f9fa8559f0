"""Every decimal figure quoted in a chapter's prose is produced by that chapter's cells.

The prose is every markdown cell as the site's MyST parser reads it (:mod:`myst_tokens`),
outside code (fences and inline code), math (``$...$``, ``$$...$$``, ``{math}`` blocks), roles,
labels, directive options and link targets; the bodies of theorems, proofs, exercises and
admonitions are prose. A figure such as ``0.996``, ``22.6`` or ``-4.0`` must appear as a number
in the outputs of the chapter's code cells, as recorded in ``tests/reference/`` (which nbval
checks against a fresh execution). Glued values
(``{glue:text}`` roles) are computed, so they are not literal figures in the prose.

The stricter form binds each figure to its place: a figure quoted in a ``##`` section must be
printed by a cell of that section (or of a section or figure the passage names), and whole
numbers of two digits or more are checked too (printed, or written in that section's code or
math, or on a short list of literal numbers such as years). "0.910 nats" where 0.910 is printed
only in another section fails, and so does "400 pairs" where the section's cell prints 4000.

Together with nbval this closes the loop: edit a figure in the prose alone and this test fails;
change a computation or a seed alone and nbval fails on the cell that prints it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat
import pytest
from myst_tokens import (  # tools/sphinx_ext, on the path by conftest
    children,
    directive,
    h2_chunks,
    parse,
)

from tests.nbharness import chapter_paths, read_chapter, reference_path, unrecorded

#: A decimal figure (0.996, −4.8) or a percentage (39%, 99.4%) in the prose.
FIGURE = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+%?|%)(?![\w.]*\d)")
#: Directives whose body is code or math, not prose.
NOT_PROSE = ("code", "literalinclude", "glue", "math")
#: Inline tokens that are prose; every other one (code, math, roles, markup) is a gap.
TEXT = ("text", "text_special", "html_inline")


def prose(markdown: str) -> str:
    """The reader-facing text of a markdown cell: no code, math, roles, labels or options.

    Directive bodies (theorem, proof, exercise, note ...) are prose, read again as MyST.
    """
    parts = []
    for token in parse(markdown):
        found = directive(token)
        if found and not found.name.startswith(NOT_PROSE):
            parts.append(prose(found.body))
        elif token.type == "html_block":
            parts.append(token.content)
        elif token.type == "inline":
            parts.append(inline_prose(token))
    return "\n".join(parts)


def inline_prose(token) -> str:
    """The text of an inline token, with a gap for code, math, roles and markup, and for a
    citation: ``tools/lab_compat.py`` writes ``{cite:p}`` as a link to ``references.bib``
    ("([Higham, 2002](../references.bib#higham2002accuracy))"), whose year is no figure."""
    out, in_citation = [], 0
    for child in children([token]):
        if child.type == "link_open" and "references.bib#" in (child.attrGet("href") or ""):
            in_citation += 1
        elif child.type == "link_close" and in_citation:
            in_citation -= 1
        out.append(child.content if child.type in TEXT and not in_citation else " ")
    return "".join(out)


def quoted_figures(markdown: str) -> list[str]:
    """Decimal figures and percentages in the prose of ``markdown`` (``−`` read as ``-``)."""
    return [m.group(0).replace("−", "-") for m in FIGURE.finditer(prose(markdown))]


def output_text(nb) -> str:
    """All text the code cells printed or displayed (stdout, text/plain, text/html, glue)."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(out["text"])
            for key, value in out.get("data", {}).items():
                if isinstance(value, str) and ("text" in key or "json" in key):
                    parts.append(value)
    return "\n".join(parts)


def produced(figure: str, text: str) -> bool:
    """Whether ``figure`` stands in ``text`` as a whole number token (0.99 is not in 0.996)."""
    pattern = r"(?<![\d.])" + re.escape(figure.lstrip("-")) + r"(?![\d])"
    return re.search(pattern, text.replace("−", "-")) is not None


def test_prose_extraction_skips_code_and_math():
    md = ("The variance is 0.996 here, $x = 1.5$ there, `y = 2.5`, and\n\n"
          "$$\nz = 3.5\n$$ (eq-z)\n\nwith $y \\approx\n2.5$ split over lines, "
          "{eq}`eq-z`, {cite:p}`key2.5`, [a 12% link](https://x.org/1.5).\n"
          "```{prf:theorem} Title\n:label: thm-7.5\nInside a theorem 4.25 counts.\n```\n"
          "::::{exercise}\n:label: ex-1\n:::{note}\n**99.4%** of them\n:::\n::::\n"
          "```{math}\nw = 6.5\n```\n```{prf:proof}\nHence 0.25 of it.\n```\n"
          "```python\nprint(7.5)\n```\nSee §3.2.1 of the paper and 1.008, 39%, "
          "([Higham, 2002](../references.bib#higham2002accuracy)) and [11.5](https://x.org).")
    assert quoted_figures(md) == ["0.996", "12%", "4.25", "99.4%", "0.25", "1.008", "39%",
                                  "11.5"]
    assert whole_numbers("In ([Higham, 2002](../references.bib#higham2002accuracy)), 2003 "
                         "and [4000 pairs](#sec-x).") == ["2003", "4000"]


def test_produced_matches_whole_numbers_only():
    assert produced("0.99", "p = 0.99 and q") and not produced("0.99", "p = 0.996")
    assert produced("22.6", "spread 22.6\n") and not produced("2.6", "spread 22.6")


#: A whole number of two digits or more (64, 4000, 4,000) in the prose.
WHOLE = re.compile(r"(?<![\w.,−-])(?:\d{1,3}(?:,\d{3})+|\d{2,})(?![\w%]|[.,]\d)")
#: Whole numbers a chapter may write literally (years, section numbers of papers ...): the
#: short list the chapter's quoted-figure check accepts without a cell printing them.
LITERAL = {
    "*": {"2017", "2018", "2019", "2020", "2021", "2022", "2023", "2024", "2025", "2026", "2010",
          "2015", "2016", "1964", "1984", "1997", "2009", "2014"},
}


#: The opening box's reading time, checked against the word count by tests/test_structure.py.
READING_TIME = re.compile(r"Core path\s+about\s+\d+\s+minutes")


def whole_numbers(markdown: str) -> list[str]:
    """Whole numbers of two digits or more in the prose of ``markdown``, commas removed (not
    the opening box's reading time, which the structure test checks)."""
    text = READING_TIME.sub(" ", prose(markdown))
    return [m.group(0).replace(",", "") for m in WHOLE.finditer(text)]


@dataclass
class Part:
    """A stretch of a chapter inside one ``##`` section: prose, or a code cell's outputs."""

    section: int
    prose: str = ""
    printed: str = ""
    refs: tuple = ()
    figure: str = ""
    code: str = ""


def chapter_parts(nb, reference) -> tuple[list[Part], dict[str, int]]:
    """The chapter as parts tagged with their ``##`` section, and ``{label: section}``."""
    printed = {c.source: output_text(nbformat.v4.new_notebook(cells=[c]))
               for c in reference.cells if c.cell_type == "code"}
    parts, labels, section = [], {}, 0
    for cell in nb.cells:
        if cell.cell_type == "code":
            name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name", "")
            parts.append(Part(section, printed=printed.get(cell.source, ""), figure=name,
                              code=cell.source))
            if name:
                labels[name] = section
            continue
        for heading, chunk in h2_chunks(cell.source):
            if heading is not None:
                section += 1
            chunk_tokens = parse(chunk)
            for token in chunk_tokens:
                if token.type == "myst_target":
                    labels[token.content] = section
            refs = tuple(re.sub(r"^.*<|>$", "", child.content)
                         for child in children(chunk_tokens) if child.type == "myst_role"
                         and child.meta.get("name") in ("ref", "numref"))
            parts.append(Part(section, prose=chunk, refs=refs))
    return parts, labels


def nearest(figure: str, parts: list[Part]) -> str:
    """The printed number closest to ``figure``, and the section of the cell that prints it."""
    target = float(figure.rstrip("%"))
    best = None
    for part in parts:
        for m in re.finditer(r"[-−]?\d+(?:\.\d+)?", part.printed):
            value = float(m.group(0).replace("−", "-"))
            if best is None or abs(value - target) < abs(best[0] - target):
                best = (value, m.group(0), part.section)
    return "nothing printed" if best is None else f"nearest printed: {best[1]} (section {best[2]})"


def unbound(path) -> list[str]:
    """The figures and whole numbers of ``path``'s prose that its own section does not make.

    A figure quoted in a ``##`` section must be printed by a cell of that section, or by a cell
    of a section or figure the same passage names with {ref}/{numref} (as a summary does). A
    whole number of two digits or more may also stand in that section's code or in the
    passage's math, or be on the chapter's list of literal numbers (years ...).
    """
    ref = reference_path(path)
    problem = unrecorded(path, ref)
    assert problem is None, problem
    nb = read_chapter(path)
    parts, labels = chapter_parts(nb, nbformat.read(ref, as_version=4))
    titles = ["the chapter's opening"] + [
        m.group(1) for c in nb.cells if c.cell_type == "markdown"
        for m in re.finditer(r"^## (.+)$", c.source, re.MULTILINE)]
    literal = LITERAL["*"] | LITERAL.get(path.stem, set())
    missing = []
    for part in parts:
        if not part.prose:
            continue
        named = {labels[r] for r in part.refs if r in labels}
        near = [p for p in parts if p.section == part.section or p.section in named
                or (p.figure and p.figure in part.refs)]
        printed = "\n".join(p.printed for p in near)
        written = "\n".join([p.code for p in near] + re.findall(r"\$[^$]+\$", part.prose))
        where = titles[part.section] if part.section < len(titles) else part.section
        for figure in quoted_figures(part.prose):
            if not produced(figure, printed):
                missing.append(f"{figure!r} in section {where!r}: {nearest(figure, parts)}")
        for number in whole_numbers(part.prose):
            if not (number in literal or produced(number, printed.replace(",", ""))
                    or produced(number, written.replace(",", ""))):
                missing.append(f"{number!r} in section {where!r}: {nearest(number, parts)}")
    return missing


@pytest.mark.parametrize("path", chapter_paths(), ids=lambda p: p.stem)
def test_every_quoted_figure_is_printed_where_it_is_quoted(path):
    missing = unbound(path)
    assert not missing, (
        f"{path.name}: figures quoted in a section that no cell of that section prints (print "
        "it in the section's cell that computes it; or name the section that does with "
        "{ref}`text <sec-label>`; or, for a literal whole number such as a year, add it to "
        "LITERAL in tests/test_quoted_figures.py):\n  " + "\n  ".join(missing))


def test_a_figure_printed_only_in_another_section_is_caught(tmp_path, monkeypatch):
    """The two mutations: 4000 written as 400, and a figure moved to a section that does not
    print it."""
    import tests.test_quoted_figures as q

    chapter = tmp_path / "toy.md"
    chapter.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n"
        "  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
        "## One\n\nOver 4000 pairs the mean is 0.910.\n\n"
        "```{code-cell} ipython3\nprint('over 4000 pairs: 0.910')\n```\n\n"
        "## Two\n\nHere 0.25 of it.\n\n```{code-cell} ipython3\nprint(0.25)\n```\n")
    nb = read_chapter(chapter)
    reference = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(c.source, outputs=[nbformat.v4.new_output(
            "stream", name="stdout", text=t)])
        for c, t in zip([c for c in nb.cells if c.cell_type == "code"],
                        ["over 4000 pairs: 0.910\n", "0.25\n"], strict=True)])
    ref_path = tmp_path / "toy.ipynb"
    nbformat.write(reference, ref_path)
    monkeypatch.setattr(q, "reference_path", lambda path: ref_path)
    assert q.unbound(chapter) == []
    for old, new in (("Over 4000", "Over 400"), ("Here 0.25", "Here 0.910")):
        chapter.write_text(chapter.read_text().replace(old, new))
        assert len(q.unbound(chapter)) == 1, new
        chapter.write_text(chapter.read_text().replace(new, old))
