"""Every decimal figure quoted in a chapter's prose is produced by that chapter's cells.

The prose is every markdown cell as the site's MyST parser reads it (:mod:`myst_tokens`),
outside code (fences and inline code), math (``$...$``, ``$$...$$``, ``{math}`` blocks), roles,
labels, directive options and link targets; the bodies of theorems, proofs, exercises and
admonitions are prose. A figure such as ``0.996``, ``22.6`` or ``-4.0`` must appear as a number
in the outputs of the chapter's code cells, as recorded in ``tests/reference/`` (which nbval
checks against a fresh execution). Glued values
(``{glue:text}`` roles) are computed, so they are not literal figures in the prose.

Together with nbval this closes the loop: edit a figure in the prose alone and this test fails;
change a computation or a seed alone and nbval fails on the cell that prints it.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from myst_tokens import children, directive, parse  # tools/sphinx_ext, on the path by conftest

from tests.nbharness import chapter_paths, read_chapter, reference_path

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
            parts.append("".join(child.content if child.type in TEXT else " "
                                 for child in children([token])))
    return "\n".join(parts)


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
          "```python\nprint(7.5)\n```\nSee §3.2.1 of the paper and 1.008, 39%.")
    assert quoted_figures(md) == ["0.996", "12%", "4.25", "99.4%", "0.25", "1.008", "39%"]


def test_produced_matches_whole_numbers_only():
    assert produced("0.99", "p = 0.99 and q") and not produced("0.99", "p = 0.996")
    assert produced("22.6", "spread 22.6\n") and not produced("2.6", "spread 22.6")


@pytest.mark.parametrize("path", chapter_paths(), ids=lambda p: p.stem)
def test_every_quoted_figure_is_produced(path):
    ref = reference_path(path)
    assert ref.exists(), f"no reference outputs for {path.name}: run `make references`"
    outputs = output_text(nbformat.read(ref, as_version=4))
    nb = read_chapter(path)
    missing = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for figure in quoted_figures(cell.source):
            if not produced(figure, outputs):
                first_line = next((ln for ln in cell.source.splitlines() if figure in ln),
                                  cell.source[:80])
                missing.append(f"{figure!r} in: {first_line.strip()[:100]}")
    assert not missing, (
        f"{path.name}: figures quoted in the prose that no cell prints or glues "
        "(fix the prose, or print the figure in the cell that computes it):\n  "
        + "\n  ".join(missing)
    )
