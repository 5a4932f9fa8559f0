"""Every decimal figure quoted in a chapter's prose is produced by that chapter's cells.

The prose is every markdown cell, outside code (fences and inline code), math (``$...$``,
``$$...$$``, ``{math}`` blocks and roles) and link targets. A figure such as ``0.996``, ``22.6``
or ``-4.0`` must appear as a number in the outputs of the chapter's code cells, as recorded in
``tests/reference/`` (which nbval checks against a fresh execution). Glued values
(``{glue:text}`` roles) are computed, so they are not literal figures in the prose.

Together with nbval this closes the loop: edit a figure in the prose alone and this test fails;
change a computation or a seed alone and nbval fails on the cell that prints it.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.nbharness import chapter_paths, read_chapter, reference_path

#: A decimal figure (0.996, −4.8) or a percentage (39%, 99.4%) in the prose.
FIGURE = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+%?|%)(?![\w.]*\d)")
HIDDEN = [
    re.compile(r"^(```+|~~~+)[^\n]*\n.*?^\1\s*$", re.S | re.M),  # fenced code / directives
    re.compile(r"\$\$.*?\$\$", re.S),                                # display math
    re.compile(r"(?<!\\)\$(?:[^$\n]|\n(?!\s*\n))+?(?<!\\)\$"),       # inline math
    re.compile(r"\{(math|eq|glue:text|glue:|glue|cite:p|cite:t|ref|numref|doc)\}`[^`]*`"),
    re.compile(r"`[^`\n]*`"),                                        # inline code
    re.compile(r"\]\([^)]*\)"),                                      # link targets
    re.compile(r"^\(\S+\)=\s*$", re.M),                              # labels
    re.compile(r"^:[\w-]+:.*$", re.M),                               # directive options
]
DISPLAY_FENCES = ("{math}",)


def prose(markdown: str) -> str:
    """The reader-facing text of a markdown cell, with code and math removed."""
    text = markdown

    def keep_directive_body(match: re.Match) -> str:
        header = match.group(0).split("\n", 1)[0]
        is_directive = "{" in header and not any(f in header for f in DISPLAY_FENCES)
        is_code = any(k in header for k in ("{code", "{literalinclude", "{glue"))
        if is_directive and not is_code:  # theorem, proof, exercise, note: prose inside
            body = match.group(0).split("\n", 1)[1].rsplit("\n", 2)[0]
            return "\n" + prose(body) + "\n"
        return "\n"

    text = HIDDEN[0].sub(keep_directive_body, text)
    for pattern in HIDDEN[1:]:
        text = pattern.sub(" ", text)
    return text


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
    md = ("The variance is 0.996 here, $x = 1.5$ there, `y = 2.5`, and\n"
          "$$\nz = 3.5\n$$\nwith $y \\approx\n2.5$ split over lines.\n"
          "```{prf:theorem}\nInside a theorem 4.25 counts.\n```\n"
          "```python\nprint(7.5)\n```\nSee §3.2.1 of the paper and 1.008.")
    assert quoted_figures(md) == ["0.996", "4.25", "1.008"]


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
