"""Kept for one commit: the token-based extraction finds exactly the figures the regexes found."""

import re

import pytest

from tests.nbharness import ROOT, chapter_paths, read_chapter
from tests.test_quoted_figures import quoted_figures

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


def old_prose(markdown: str) -> str:
    """The reader-facing text of a markdown cell, with code and math removed."""
    text = markdown

    def keep_directive_body(match: re.Match) -> str:
        header = match.group(0).split("\n", 1)[0]
        is_directive = "{" in header and not any(f in header for f in DISPLAY_FENCES)
        is_code = any(k in header for k in ("{code", "{literalinclude", "{glue"))
        if is_directive and not is_code:  # theorem, proof, exercise, note: prose inside
            body = match.group(0).split("\n", 1)[1].rsplit("\n", 2)[0]
            return "\n" + old_prose(body) + "\n"
        return "\n"

    text = HIDDEN[0].sub(keep_directive_body, text)
    for pattern in HIDDEN[1:]:
        text = pattern.sub(" ", text)
    return text


def old_quoted_figures(markdown: str) -> list[str]:
    """Decimal figures and percentages in the prose of ``markdown`` (``−`` read as ``-``)."""
    return [m.group(0).replace("−", "-") for m in FIGURE.finditer(old_prose(markdown))]



@pytest.mark.parametrize("path", [*chapter_paths(), ROOT / "book" / "intro.md"],
                         ids=lambda p: p.stem)
def test_same_figures_as_the_regexes(path):
    for cell in read_chapter(path).cells:
        if cell.cell_type == "markdown":
            assert quoted_figures(cell.source) == old_quoted_figures(cell.source), cell.source
