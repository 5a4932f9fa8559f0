"""Make the chapters read in JupyterLab as they do on the website, and survive a save there.

Run it on the chapters after editing them (it is idempotent; a second run changes nothing)::

    .venv/bin/python tools/lab_compat.py book/*.md          # rewrite in place
    .venv/bin/python tools/lab_compat.py --check book/*.md  # exit 1 if a file would change

What it does to each MyST notebook, and why:

1. **Header.** The kernelspec's ``display_name`` becomes what the environment's kernel reports
   (``Python 3 (ipykernel)``): JupyterLab writes that name into the notebook when it starts the
   kernel, so any other name marks the chapter modified as soon as it opens.
2. **Jupytext's own formatting.** The file is written as jupytext writes it, with the project's
   ``jupytext.toml``, so that a save from JupyterLab (jupytext's contents manager) gives back
   the same bytes. This re-wraps cell metadata (captions, alt texts) the way jupytext's YAML
   writer does; the parsed notebook is unchanged.
3. **Hidden solutions.** A code cell tagged ``hide-cell`` (the code of a solution) also gets
   ``jupyter: {source_hidden: true}``, the cell metadata JupyterLab reads to collapse a
   cell's input. The site keeps using the tag. Not ``outputs_hidden``: Run All shows every
   output it makes and clears that flag, so a save after Run All would rewrite the file; the
   solution's cell folds its printed answer itself (``lib.widgets.folded_output``).
   A check cell (tagged ``check``, with ``hide-input`` for the site) is folded the same way:
   its code hidden, its one printed ``Checked: ...`` line shown.
4. **Figure references.** jupyterlab-myst renders only the Markdown cells, so it never sees
   a figure declared in a code cell's ``mystnb`` metadata, and ``{numref}`fig-x``` shows as
   "Cross Reference Not Found". Each such reference is written with its number as explicit
   text, ``{ref}`Fig. 2.1 <fig-x>```: the site renders exactly what ``{numref}`` rendered
   (the same words and link), and JupyterLab shows the text. The numbers follow Sphinx's: the
   chapter's number among the numbered chapters of ``_toc.yml``, then the figure's position
   among the chapter's named figures. Re-running the script renumbers.
5. **Citations.** jupyterlab-myst reads no bibliography, so every ``{cite:p}`` shows as
   "Citation Not Found". ``{cite:p}`a,b``` becomes ``([A et al., 2017](../references.bib#a);
   [B, 2018](../references.bib#b))`` and ``{cite:t}`a``` becomes ``[A et al. (2017)](...#a)``:
   author and year, linked to the entry in ``references.bib``. The project's Sphinx extension
   ``tools/sphinx_ext/lab_citations.py`` turns these links back into the same roles before
   Sphinx reads the page, so the site's citations and bibliography do not change.
6. **Links to other chapters.** jupyterlab-myst opens one notebook at a time: a bare
   ``{doc}`heads``` shows as the file name, and a ``{ref}`sec-x``` to a section of another
   chapter as "Cross Reference Not Found". Each gets its text written, as Sphinx would render
   it: ``{doc}`Many heads and the value path <heads>``` (the chapter's title) and
   ``{ref}`The value path <sec-x>``` (the section's heading). The site renders the same words
   and link. A heading with math or a role cannot be written as a link's text: the script
   stops and asks for the text.

7. **Glossary terms.** ``{term}`one-hot``` (or ``{term}`one-hot vectors <one-hot>```) is a
   role jupyterlab-myst cannot resolve in a single notebook: it becomes
   ``[one-hot](glossary.md#term-one-hot)``, a link that opens the glossary in JupyterLab.
   ``tools/sphinx_ext/lab_citations.py`` turns it back into the role for the site, whose
   hover preview shows the entry. A term that is not in ``book/glossary.md`` stops the script.

Plain Markdown pages (``book/intro.md``) get changes 5, 6 and 7 only.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from pathlib import Path

import jupytext
import yaml
from jupyter_client.kernelspec import KernelSpecManager
from jupytext.config import load_jupytext_config
from pybtex.database import parse_file

sys.path.insert(0, str(Path(__file__).resolve().parent / "sphinx_ext"))
from lab_citations import GLOSSARY, glossary_terms, slug  # tools/sphinx_ext

ROOT = Path(__file__).resolve().parents[1]
FORMAT = "md:myst"
FIG_FORMAT = "Fig. {number}"
HIDDEN = {"source_hidden": True}
#: Cell tags whose code JupyterLab shows folded: a solution's code, and a check cell.
FOLDED = {"hide-cell", "check"}

# {numref}`fig-x`, {numref}`Figure %s <fig-x>`, and this script's own {ref}`Fig. 2.1 <fig-x>`.
FIG_REF = re.compile(
    r"\{numref\}`(?:(?P<title>[^`<]*?)\s*<)?(?P<a>fig-[\w-]+)>?`"
    r"|\{ref\}`Fig\. [\d.]+ <(?P<b>fig-[\w-]+)>`"
)


def numbered_chapters(toc: Path = ROOT / "_toc.yml") -> list[Path]:
    """The chapters in the numbered parts of ``_toc.yml``, in order (chapter 1 first)."""
    data = yaml.safe_load(toc.read_text())
    files = [ch["file"] for part in data.get("parts", []) if part.get("numbered")
             for ch in part.get("chapters", [])]
    return [(ROOT / f).with_suffix(".md").resolve() for f in files]


def figure_names(nb) -> list[str]:
    """The figure names declared in the code cells' ``mystnb`` metadata, in order."""
    return [cell.metadata["mystnb"]["figure"]["name"] for cell in nb.cells
            if cell.cell_type == "code"
            and "name" in cell.metadata.get("mystnb", {}).get("figure", {})]


def figure_numbers(path: Path, nb) -> dict[str, str]:
    """``{figure name: "2.1"}`` as Sphinx numbers this chapter's figures."""
    chapters = numbered_chapters()
    if path.resolve() not in chapters:
        return {}
    chapter = chapters.index(path.resolve()) + 1
    return {name: f"{chapter}.{i}" for i, name in enumerate(figure_names(nb), start=1)}


def rewrite_figure_refs(source: str, numbers: dict[str, str], path: Path) -> str:
    def replace(match: re.Match) -> str:
        name = match["a"] or match["b"]
        if name not in numbers:
            raise SystemExit(f"{path}: reference to {name}, which is no figure of this chapter")
        return f"{{ref}}`{FIG_FORMAT.format(number=numbers[name])} <{name}>`"
    return FIG_REF.sub(replace, source)


BARE_DOC = re.compile(r"\{doc\}`(?P<name>[\w./-]+)`")
BARE_REF = re.compile(r"\{ref\}`(?P<label>[\w-]+)`")
LABEL = re.compile(r"^\((?P<label>[\w-]+)\)=\s*\n+#+\s+(?P<heading>.+?)\s*$", re.M)
TITLE = re.compile(r"^# (?P<title>.+?)\s*$", re.M)


def plain_text(text: str, what: str, path: Path) -> str:
    """``text`` if it can stand as a link's text (no math, no role, no backtick)."""
    if re.search(r"[$`{}]", text):
        raise SystemExit(f"{path}: {what} has math or a role in its title ({text!r}); write "
                         "the link's text yourself, as {doc}`text <name>` or {ref}`text <label>`")
    return text


def rewrite_cross_links(source: str, path: Path, book: Path = ROOT / "book") -> str:
    """Bare ``{doc}`` links, and bare ``{ref}`` links to another chapter's sections, with
    their text written (change 6 of the module docstring)."""
    def doc(match: re.Match) -> str:
        target = (path.parent / f"{match['name']}.md").resolve()
        if not target.exists():
            raise SystemExit(f"{path}: {{doc}}`{match['name']}`: no file {target.name}")
        found = TITLE.search(target.read_text(encoding="utf-8"))
        if not found:
            raise SystemExit(f"{path}: {target.name} has no '# ' title for {match[0]}")
        title = plain_text(found["title"], f"{{doc}}`{match['name']}`", path)
        return f"{{doc}}`{title} <{match['name']}>`"

    own = {m["label"] for m in LABEL.finditer(path.read_text(encoding="utf-8"))}
    others = {}
    for other in sorted(book.glob("*.md")):
        if other.resolve() != path.resolve():
            for m in LABEL.finditer(other.read_text(encoding="utf-8")):
                others.setdefault(m["label"], m["heading"])

    def ref(match: re.Match) -> str:
        label = match["label"]
        if label in own or label not in others:
            return match[0]
        return f"{{ref}}`{plain_text(others[label], f'{{ref}}`{label}`', path)} <{label}>`"

    return BARE_REF.sub(ref, BARE_DOC.sub(doc, source))


CITE = re.compile(r"\{cite(?::(?P<kind>[a-z]+))?\}`(?P<keys>[^`]*)`")


def author_year(entry) -> tuple[str, str]:
    """``("Vaswani et al.", "2017")``: last names as sphinxcontrib-bibtex's author_year style
    abbreviates them (one, two joined by "and", or the first and "et al.")."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    last = [" ".join(p.last_names).replace("{", "").replace("}", "") for p in people]
    names = (last[0] if len(last) == 1 else " and ".join(last) if len(last) == 2
             else f"{last[0]} et al." if last else entry.fields.get("title", "?"))
    return names, entry.fields.get("year", "n.d.")


@functools.cache
def _bib_entries(bib: Path, mtime_ns: int):
    return parse_file(str(bib)).entries


def bib_entries(bib: Path):
    """The entries of the bibliography ``bib``, parsed once while the file is unchanged."""
    return _bib_entries(bib, bib.stat().st_mtime_ns)


def rewrite_citations(source: str, path: Path, bib: Path = ROOT / "references.bib") -> str:
    target = os.path.relpath(bib, path.resolve().parent)

    def link(key: str, narrative: bool) -> str:
        entries = bib_entries(bib)
        if key not in entries:
            raise SystemExit(f"{path}: citation of {key}, which is not in {bib.name}")
        names, year = author_year(entries[key])
        text = f"{names} ({year})" if narrative else f"{names}, {year}"
        return f"[{text}]({target}#{key})"

    def replace(match: re.Match) -> str:
        keys = [k.strip() for k in match["keys"].split(",")]
        if match["kind"] == "t" and len(keys) == 1:
            return link(keys[0], narrative=True)
        if match["kind"] == "p" and all(re.fullmatch(r"[\w:.-]+", k) for k in keys):
            return "(" + "; ".join(link(k, narrative=False) for k in keys) + ")"
        raise SystemExit(f"{path}: no link form for {match[0]} (only {{cite:p}} and a "
                         "one-key {cite:t} without pre- or post-text)")
    return CITE.sub(replace, source)


TERM = re.compile(r"\{term\}`(?P<text>[^`<]*?)\s*(?:<(?P<term>[^`>]+)>)?`")


@functools.cache
def _glossary_terms(glossary: Path, mtime_ns: int) -> dict[str, str]:
    return glossary_terms(glossary)


def rewrite_terms(source: str, path: Path, glossary: Path = GLOSSARY) -> str:
    """Every ``{term}`` role as a link to its glossary entry (change 7)."""
    terms = _glossary_terms(glossary, glossary.stat().st_mtime_ns)  # parsed once a run

    def link(match: re.Match) -> str:
        term = (match["term"] or match["text"]).strip()
        if slug(term) not in terms:
            raise SystemExit(f"{path}: {match[0]} names no term of book/glossary.md")
        return f"[{match['text'].strip()}](glossary.md#term-{slug(term)})"

    return TERM.sub(link, source)


def kernel_display_name(name: str) -> str:
    """The display name the environment's kernel ``name`` reports (what JupyterLab writes)."""
    return KernelSpecManager().get_kernel_spec(name).display_name


def lab_compatible(path: Path) -> str:
    """The text of chapter ``path`` after the changes of the module docstring."""
    nb = jupytext.reads(path.read_text(encoding="utf-8"), fmt=FORMAT)
    spec = nb.metadata.setdefault("kernelspec", {"name": "python3", "language": "python"})
    spec["display_name"] = kernel_display_name(spec["name"])
    numbers = figure_numbers(path, nb)
    for cell in nb.cells:
        if cell.cell_type == "code" and FOLDED & set(cell.metadata.get("tags", [])):
            cell.metadata["jupyter"] = dict(HIDDEN)
        elif cell.cell_type == "markdown":
            cell.source = rewrite_terms(rewrite_cross_links(rewrite_citations(
                rewrite_figure_refs(cell.source, numbers, path), path), path), path)
    return jupytext.writes(nb, fmt=FORMAT, config=load_jupytext_config(str(path)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a chapter is not lab-compatible")
    args = parser.parse_args(argv)
    stale = []
    for path in args.chapters:
        text = path.read_text(encoding="utf-8")
        if text.startswith("---\njupytext:"):
            new = lab_compatible(path)
        else:  # a plain Markdown page (intro): only its citations and links
            new = rewrite_terms(rewrite_cross_links(rewrite_citations(text, path), path), path)
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{'would rewrite' if args.check else 'rewrote'} {path}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
