"""MyST Markdown read once, the way the book's build reads it.

The parser is the one myst-parser builds for Sphinx (``create_md_parser``: markdown-it-py with
the mdit-py-plugins for roles, targets, comments, colon fences, dollar and amsmath math), with
the extensions listed in ``_config.yml``. A directive's body is not parsed by markdown-it (it
is the directive's own text); :func:`directive` splits it into argument, options and body with
myst-parser's own ``parse_directive_text``, so a caller that wants the Markdown inside a
theorem or an exercise parses ``body`` again.

Used by the notebook downloads (``tools/sphinx_ext/notebook_export.py``), the quoted-figure
test and the download test, so the three agree with the site on what is a role, a directive,
math or code.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from docutils.parsers.rst import Directive as DocutilsDirective
from docutils.parsers.rst import directives
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.directives import parse_directive_text
from myst_parser.parsers.mdit import create_md_parser

ROOT = Path(__file__).resolve().parents[2]
#: Token types of MyST syntax that plain (Jupyter, CommonMark) Markdown does not have.
MYST_ONLY = {"myst_role": "a MyST role", "myst_target": "a MyST target",
             "math_block_label": "an equation label", "myst_line_comment": "a MyST comment"}


@functools.cache
def parser() -> MarkdownIt:
    """The MyST parser of the build, with the book's ``myst_enable_extensions``."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    extensions = config.get("parse", {}).get("myst_enable_extensions", [])
    return create_md_parser(MdParserConfig(enable_extensions=set(extensions)), RendererHTML)


def parse(text: str) -> list[Token]:
    """The block tokens of ``text`` (inline tokens carry their ``children``)."""
    return parser().parse(text)


class _Options(dict):
    """An option spec that accepts every option as text, as no directive is known here."""

    def __missing__(self, key):
        return directives.unchanged


class _AnyDirective(DocutilsDirective):
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = _Options(label=directives.unchanged)


@dataclass
class Directive:
    """A ```` ```{name} argument ```` or ``:::{name}`` block, split as myst-parser splits it."""

    name: str
    argument: str
    options: dict = field(default_factory=dict)
    body: str = ""


def directive(token: Token) -> Directive | None:
    """The directive a fence token opens, or ``None`` for a code fence or any other token."""
    if token.type not in ("fence", "colon_fence"):
        return None
    parts = token.info.strip().split(maxsplit=1)
    name = parts[0] if parts else ""
    if not (name.startswith("{") and name.endswith("}")):
        return None
    argument = parts[1] if len(parts) > 1 else ""
    content = token.content
    if token.type == "colon_fence" and content.startswith(":::"):
        content = "\n" + content  # a nested fence, not an option (as myst-parser does)
    parsed = parse_directive_text(_AnyDirective, argument, content)
    options = {key: value or "" for key, value in parsed.options.items()}
    return Directive(name[1:-1], argument, options, "\n".join(parsed.body))


def children(tokens: list[Token]) -> Iterator[Token]:
    """The inline tokens of every block, in order (roles, text, code, math, links ...)."""
    for token in tokens:
        for child in token.children or []:
            yield child
            yield from children([child])  # an image's alt text


def myst_leftovers(text: str) -> list[tuple[str, str]]:
    """``(what, source)`` of every piece of MyST-only syntax in ``text``, directives included."""
    found = []
    for token in parse(text):
        if directive(token):
            found.append(("a MyST directive", f"{token.markup}{token.info}"))
        if token.type in MYST_ONLY:
            found.append((MYST_ONLY[token.type], token.content or token.info))
        for child in children([token]):
            if child.type in MYST_ONLY:
                found.append((MYST_ONLY[child.type], f"{{{child.meta['name']}}}`{child.content}`"))
    return found


def h2_chunks(text: str) -> list[tuple[str | None, str]]:
    """``text`` cut before each ``##`` heading (and the target label just above it): a list of
    ``(heading, chunk)``, the heading ``None`` for what precedes the first one.

    A Markdown cell may hold the end of one section and the start of the next (``## Next``
    and ``## References`` with no ``+++`` between them): each chunk belongs to its own section.

    >>> [h for h, _ in h2_chunks("intro\\n\\n(sec-a)=\\n## A\\n\\ntext\\n## B\\n")]
    [None, 'A', 'B']
    """
    lines = text.splitlines(keepends=True)
    tokens = parse(text)
    cuts, titles = [0], [None]
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            before = tokens[i - 1] if i and tokens[i - 1].type == "myst_target" else token
            cuts.append(before.map[0])
            titles.append(tokens[i + 1].content.strip())
    cuts.append(len(lines))
    return [(title, "".join(lines[a:b]))
            for title, a, b in zip(titles, cuts, cuts[1:], strict=False)
            if title is not None or a < b]
