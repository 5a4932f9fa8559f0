"""Make an executed MyST notebook readable outside the book (Colab, plain Jupyter, GitHub).

MyST Markdown has syntax that plain Jupyter Markdown does not: directives (```` ```{name} ````
and ``:::{name}`` fences), roles (``{cite}`key` ``), targets (``(label)=``), labelled display
math (``$$ ... $$ (label)``) and comments (``% ...``). :func:`degrade_myst` rewrites them into
Markdown that reads well anywhere: theorems, definitions and exercises become block quotes with a
bold title, solutions and dropdowns become ``<details>`` blocks, cross-references and citations
become their text, ``{math}`` becomes ``$...$``. :func:`export_notebook` applies it to every
Markdown cell, fills ``{glue}`` roles with the glued values, drops the live widget views and
widget state (the explorable HTML face and the PNG of each control stay), and adds a first cell
saying where the notebook comes from and how to run it again.

MyST is read with :mod:`myst_tokens` (myst-parser's own tokenizer, as the site reads it): only
the lines of the tokens that are MyST-only are rewritten, the rest is kept as written.
"""

from __future__ import annotations

import copy
import io
import re
from pathlib import Path

import nbformat
from myst_tokens import Directive, directive, parse

#: The key of a figure's narrow drawing in its output's ``metadata["image/png"]``
#: (``lib.widgets.narrow.NARROW_KEY``): the site serves it (:mod:`narrow_figures`), a download
#: drops it.
NARROW_KEY = "narrow_png"
#: Titles shown for directives; anything not listed gets its own name, capitalised.
TITLES = {
    "prf:proof": "Proof", "solution": "Solution", "exercise": "Exercise",
    "seealso": "See also", "admonition": "",
}
DROPPED = {"bibliography", "tableofcontents", "toctree", "nb-exec-table", "glossary",
           "solution-end", "exercise-end"}
DETAILS = {"solution", "dropdown", "solution-start"}
CODE = {"code-cell", "code-block", "code", "sourcecode"}
GLUE = {"glue:figure", "glue:", "glue", "glue:any", "glue:md", "glue:math"}
#: Layout directives: only their content is kept.
CONTAINERS = {"margin", "sidebar", "epigraph", "div", "container", "card", "tab-item",
              "tab-set", "grid", "grid-item", "grid-item-card", "only", "raw"}
REFERENCES = {"ref", "numref", "prf:ref", "doc", "term", "download", "any", "abbr"}


def _quote(text: str) -> str:
    return "\n".join(("> " + line).rstrip() for line in text.strip("\n").split("\n"))


def _title(name: str, args: str, opts: dict) -> str:
    base = TITLES.get(name, name.split(":")[-1].replace("-", " ").capitalize())
    args = args.strip()
    if name == "admonition":
        return args or "Note"
    if name in ("solution", "solution-start"):
        return "Solution"
    if args and name not in ("exercise",):
        return f"{base} ({args})" if base else args
    if opts.get("class") and not base:
        return opts["class"].capitalize()
    return base


def _figure(found: Directive, content: str) -> str:
    out = f"![{found.options.get('alt', 'figure')}]({found.argument.strip()})\n"
    return out + (f"\n*{content.strip()}*\n" if content.strip() else "")


def _details(found: Directive, content: str) -> str:
    summary = found.argument.strip() if found.name == "dropdown" else ""
    summary = summary or _title(found.name, found.argument, found.options)
    return f"\n<details><summary>{summary}</summary>\n\n{content.strip()}\n\n</details>\n\n"


def _proof(content: str) -> str:
    body = content.strip()
    end = "\n\n∎" if body.endswith("$$") else " ∎"  # not after a closing $$
    return f"\n*Proof.* {body}{end}\n\n"


def _included(found: Directive, include_dir: Path | None) -> str:
    """A ``{literalinclude}`` as the fenced code of the file it shows."""
    language = found.options.get("language", "")
    if include_dir is None:
        return f"*(the file `{found.argument.strip()}`)*\n"
    code = (include_dir / found.argument.strip()).read_text()
    return f"```{language}\n{code.rstrip()}\n```\n"


def _directive(found: Directive, glue: dict | None, labels: dict | None,
               include_dir: Path | None = None) -> str:
    """Plain Markdown for one directive: code and math as they are, prose degraded in turn."""
    name = found.name
    if name == "literalinclude":
        return _included(found, include_dir)
    if name in CODE:
        return f"```{found.argument.strip()}\n{found.body.rstrip()}\n```\n"
    if name == "math":
        return f"$$\n{found.body.strip()}\n$$\n"
    if name in GLUE:
        return (f"*(figure `{found.argument.strip()}`: see the output of the cell "
                "that makes it)*\n")
    if name in DROPPED:
        return ""
    content = degrade_myst(found.body, glue, labels, include_dir)  # nested directives, roles
    if name in ("figure", "image"):
        return _figure(found, content)
    if name in CONTAINERS:
        return content.strip("\n") + "\n"
    if name in DETAILS:
        return _details(found, content)
    if name == "prf:proof":
        return _proof(content)
    title = _title(name, found.argument, found.options)
    head = f"**{title}.**" if title else ""
    return "\n" + _quote(f"{head}\n\n{content.strip()}" if head else content) + "\n\n"


def _glued(content: str, glue: dict) -> str:
    key, _, fmt = content.partition(":")
    value = glue.get(key.strip())
    if value is None:
        return f"`{content}`"
    text = value.strip("'\"")
    try:
        return format(float(text), fmt) if fmt else text
    except ValueError:
        return text


def _role(name: str, content: str, glue: dict | None, labels: dict | None) -> str:
    """The text a role shows: math as ``$...$``, a citation as ``[key]``, a reference as its
    number or title."""
    labels = labels or {}
    if name == "math":
        return f"${content}$"
    if name.startswith("cite"):
        return "[" + ", ".join(k.strip() for k in content.split(",")) + "]"
    if name == "eq":
        return labels.get(content, f"({content})")
    if name.startswith("glue") and glue is not None:
        return _glued(content, glue)
    if name in ("sub", "sup"):
        return f"<{name}>{content}</{name}>"
    explicit = re.match(r"^(.*?)\s*<[^<>]+>$", content, re.S)  # {ref}`text <target>`
    if explicit:
        return explicit.group(1)
    if name in REFERENCES:
        return labels.get(content.lstrip("~!"), content.lstrip("~!"))
    return content


def _role_end(source: str, start: int, name: str) -> int:
    """Where the role ``{name}`...``` that begins at ``start`` of ``source`` ends."""
    pos = start + len(name) + 2
    ticks = len(source[pos:]) - len(source[pos:].lstrip("`"))
    return source.index("`" * ticks, pos + ticks + 1) + ticks


def _inline(source: str, tokens: list, glue: dict | None, labels: dict | None) -> str:
    """``source`` (the text of some inline tokens) with each role replaced by its text."""
    out, pos, search = [], 0, 0
    for token in tokens:
        if token.type == "code_inline":  # step over code, which may show role syntax
            found = source.find(token.content, search)
            search = search if found < 0 else found + len(token.content)
        if token.type != "myst_role":
            continue
        name = token.meta["name"]
        start = source.index(f"{{{name}}}`", search)
        out += [source[pos:start], _role(name, token.content, glue, labels)]
        pos = search = _role_end(source, start, name)
    return "".join(out) + source[pos:]


def _math_without_label(source: str, label: str) -> str:
    """``$$ ... $$ (label)`` without its label."""
    return source.rstrip().removesuffix(f"({label})").rstrip() + "\n"


def _edits(text: str, glue: dict | None, labels: dict | None,
           include_dir: Path | None = None) -> dict[int, tuple[int, str]]:
    """``{first line: (end line, new text)}`` for every piece of MyST syntax in ``text``."""
    lines = io.StringIO(text).readlines()  # split at \n only, as markdown-it
    edits: dict[int, tuple[int, str]] = {}
    inline: dict[tuple[int, int], list] = {}
    for token in parse(text):
        if token.map is None:
            continue
        start, end = token.map
        source = "".join(lines[start:end])
        found = directive(token)
        if found:
            indent = source[:len(source) - len(source.lstrip(" \t"))]  # in a list item
            new = _directive(found, glue, labels, include_dir)
            edits[start] = (end, "".join(indent + line if line.strip() else line
                                         for line in new.splitlines(keepends=True)))
        elif token.type in ("myst_target", "myst_line_comment"):
            edits[start] = (end, "")
        elif token.type == "math_block_label":
            edits[start] = (end, _math_without_label(source, token.info))
        elif token.type == "inline" and any(c.type == "myst_role" for c in token.children):
            inline.setdefault((start, end), []).extend(token.children)  # table rows: cells
    for (start, end), tokens in inline.items():
        edits[start] = (end, _inline("".join(lines[start:end]), tokens, glue, labels))
    return edits


def degrade_myst(text: str, glue: dict | None = None, labels: dict | None = None,
                 include_dir: Path | None = None) -> str:
    """MyST Markdown rewritten as plain Jupyter Markdown (see the module docstring).

    ``glue`` maps glued names to their text; ``labels`` maps reference targets to the text a
    reference to them should show (an equation's number, a section's title); a
    ``{literalinclude}`` becomes the code of its file, read relative to ``include_dir``.
    """
    lines = io.StringIO(text).readlines()  # split at \n only, as markdown-it
    edits = _edits(text, glue, labels, include_dir)
    out, num = [], 0
    while num < len(lines):
        end, new = edits.get(num, (num + 1, lines[num]))
        out.append(new)
        num = end
    return "".join(out)


def glued_values(nb) -> dict:
    """``{name: text/plain}`` of every value glued in the notebook's outputs."""
    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("scrapbook")
            if not meta:
                continue
            prefix = meta.get("mime_prefix", "")
            text = out.get("data", {}).get(prefix + "text/plain")
            if text is not None:
                values[meta["name"]] = text
    return values


def export_notebook(nb, source_name: str = "", repository_url: str = "",
                    page_url: str = "", labels: dict | None = None,
                    include_dir: Path | None = None,
                    checked_with: str = "") -> nbformat.NotebookNode:
    """A copy of an executed MyST notebook, portable to any Jupyter front end (idempotent)."""
    nb = copy.deepcopy(nb)
    glue = glued_values(nb)
    for key in ("jupytext", "source_map", "widgets", "mystnb"):
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = degrade_myst(cell.source, glue, labels, include_dir)
        elif cell.cell_type == "code":
            for out in cell.get("outputs", []):
                data = out.get("data")
                if data and "application/vnd.jupyter.widget-view+json" in data:
                    data.pop("application/vnd.jupyter.widget-view+json")
                # a figure's narrow drawing is the site's, not the reader's
                png_meta = out.get("metadata", {}).get("image/png")
                if isinstance(png_meta, dict) and png_meta.pop(NARROW_KEY, None) is not None \
                        and not png_meta:
                    out.metadata.pop("image/png")
    if not (nb.cells and nb.cells[0].get("metadata", {}).get("book_export")):
        lines = ["*Executed notebook from the book \"The Mathematics of Attention: "
                 "Executable Notes\".*"]
        if page_url:
            lines.append(f"Read it with its figures, equations and cross-references at "
                         f"<{page_url}>.")
        if source_name:
            lines.append(f"Its source is the MyST Markdown file `{source_name}`; the outputs "
                         "below were produced when the book was built.")
        if repository_url:
            lines.append("To run it again (for example in Colab), first install the book's "
                         "package `lib` with its dependencies, in a cell of its own:\n\n"
                         f"    %pip install \"attention-math-lib @ git+{repository_url}\"\n\n"
                         "then run the notebook from the top.")
        if checked_with:
            lines.append(f"The book was checked with {checked_with}.")
        note = nbformat.v4.new_markdown_cell("\n\n".join(lines))
        note.metadata["book_export"] = True
        nb.cells.insert(0, note)
    nb.nbformat_minor = max(nb.nbformat_minor, 5)  # cell ids
    for num, cell in enumerate(nb.cells):
        cell.setdefault("id", f"cell-{num}")
    return nb
