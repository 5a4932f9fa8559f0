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
"""

from __future__ import annotations

import copy
import re

import nbformat

#: Titles shown for directives; anything not listed gets its own name, capitalised.
TITLES = {
    "prf:proof": "Proof", "solution": "Solution", "exercise": "Exercise",
    "seealso": "See also", "admonition": "",
}
ADMONITIONS = {"note", "warning", "tip", "important", "hint", "caution", "attention", "danger",
               "error", "seealso", "admonition"}
DROPPED = {"bibliography", "tableofcontents", "toctree", "nb-exec-table", "glossary"}
DETAILS = {"solution", "dropdown", "solution-start"}

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:.-]+)\}(?P<args>[^\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$\n?",
    re.S | re.M,
)
ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}`(?P<content>[^`]*)`")
TARGET = re.compile(r"^\([\w:.-]+\)=[ \t]*\n", re.M)
EQ_LABEL = re.compile(r"(\$\$)[ \t]*\([\w:.-]+\)[ \t]*$", re.M)
COMMENT = re.compile(r"^%[^\n]*\n?", re.M)


def _options(body: str) -> tuple[dict, str]:
    """Split a directive body into its options (``:key: value`` or YAML front) and content."""
    opts: dict[str, str] = {}
    lines = body.split("\n")
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            for line in lines[1:end]:
                if ":" in line:
                    key, _, value = line.partition(":")
                    opts[key.strip()] = value.strip()
            return opts, "\n".join(lines[end + 1:])
    i = 0
    while i < len(lines) and re.match(r"^\s*:[\w-]+:", lines[i]):
        key, value = re.match(r"^\s*:([\w-]+):\s*(.*)$", lines[i]).groups()
        opts[key] = value
        i += 1
    return opts, "\n".join(lines[i:])


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


def _directive(match: re.Match, glue: dict | None = None, labels: dict | None = None) -> str:
    name, args, body = match["name"], match["args"], match["body"]
    indent = match["indent"]
    opts, content = _options(body)
    content = degrade_myst(content, glue, labels)  # nested directives and roles
    if name in DROPPED:
        return ""
    if name in ("code-cell", "code-block", "code", "sourcecode"):
        return f"{indent}```{args.strip()}\n{content.rstrip()}\n{indent}```\n"
    if name == "math":
        return f"{indent}$$\n{content.strip()}\n$$\n"
    if name in ("figure", "image"):
        alt = opts.get("alt", "figure")
        caption = content.strip()
        out = f"{indent}![{alt}]({args.strip()})\n"
        return out + (f"\n*{caption}*\n" if caption else "")
    if name in ("glue:figure", "glue:", "glue", "glue:any", "glue:md", "glue:math"):
        return f"{indent}*(figure `{args.strip()}`: see the output of the cell that makes it)*\n"
    if name in ("margin", "sidebar", "epigraph", "div", "container", "card", "tab-item",
                "tab-set", "grid", "grid-item", "grid-item-card", "only", "raw"):
        return content.strip("\n") + "\n"
    if name in ("solution-end", "exercise-end"):
        return ""
    title = _title(name, args, opts)
    if name in DETAILS:
        summary = args.strip() if name == "dropdown" and args.strip() else title
        return (f"\n<details><summary>{summary}</summary>\n\n{content.strip()}\n\n"
                "</details>\n\n")
    if name == "prf:proof":
        body = content.strip()
        end = "\n\n∎" if body.endswith("$$") else " ∎"  # not after a closing $$
        return f"\n*Proof.* {body}{end}\n\n"
    head = f"**{title}.**" if title else ""
    return "\n" + _quote(f"{head}\n\n{content.strip()}" if head else content) + "\n\n"


def _role(match: re.Match, glue: dict | None = None, labels: dict | None = None) -> str:
    name, content = match["name"], match["content"]
    labels = labels or {}
    if name == "math":
        return f"${content}$"
    if name.startswith("cite"):
        return "[" + ", ".join(k.strip() for k in content.split(",")) + "]"
    if name == "eq":
        return labels.get(content, f"({content})")
    if name.startswith("glue") and glue is not None:
        key, _, fmt = content.partition(":")
        value = glue.get(key.strip())
        if value is not None:
            text = value.strip("'\"")
            if fmt:
                try:
                    return format(float(text), fmt)
                except ValueError:
                    return text
            return text
        return f"`{content}`"
    if name in ("sub", "sup"):
        return f"<{name}>{content}</{name}>"
    explicit = re.match(r"^(.*?)\s*<[^<>]+>$", content, re.S)
    if explicit:
        return explicit.group(1)
    if name in ("ref", "numref", "prf:ref", "doc", "term", "download", "any", "abbr"):
        return labels.get(content.lstrip("~!"), content.lstrip("~!"))
    return content


def degrade_myst(text: str, glue: dict | None = None, labels: dict | None = None) -> str:
    """MyST Markdown rewritten as plain Jupyter Markdown (see the module docstring).

    ``glue`` maps glued names to their text; ``labels`` maps reference targets to the text a
    reference to them should show (an equation's number, a section's title).
    """
    previous = None
    while previous != text:  # outermost fences first; repeat for the ones they enclosed
        previous = text
        text = FENCE.sub(lambda m: _directive(m, glue, labels), text)
    text = TARGET.sub("", text)
    text = EQ_LABEL.sub(r"\1", text)
    text = COMMENT.sub("", text)
    text = ROLE.sub(lambda m: _role(m, glue, labels), text)
    return text


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
                    page_url: str = "", labels: dict | None = None) -> nbformat.NotebookNode:
    """A copy of an executed MyST notebook, portable to any Jupyter front end (idempotent)."""
    nb = copy.deepcopy(nb)
    glue = glued_values(nb)
    for key in ("jupytext", "source_map", "widgets", "mystnb"):
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = degrade_myst(cell.source, glue, labels)
        elif cell.cell_type == "code":
            for out in cell.get("outputs", []):
                data = out.get("data")
                if data and "application/vnd.jupyter.widget-view+json" in data:
                    data.pop("application/vnd.jupyter.widget-view+json")
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
                         f"package in a cell: `%pip install git+{repository_url}`.")
        note = nbformat.v4.new_markdown_cell("\n\n".join(lines))
        note.metadata["book_export"] = True
        nb.cells.insert(0, note)
    nb.nbformat_minor = max(nb.nbformat_minor, 5)  # cell ids
    for num, cell in enumerate(nb.cells):
        cell.setdefault("id", f"cell-{num}")
    return nb
