"""Every chapter has the shape of a lecture (CONTRIBUTING.md, "The chapter template").

Read from the chapter's MyST source with the build's own parser (:mod:`myst_tokens`):

* an opening box ("In this chapter": what you will learn, 3 to 5 outcomes; what you need; the
  core path's reading time), before any section;
* a hook: a figure or a control in the chapter's first section;
* a "Predict, then run" prompt in every core section that has a code cell;
* check cells folded: every cell that asserts is tagged ``check`` (folded, with ``hide-input``,
  printing one ``Checked:`` line) or is a solution's ``hide-cell``;
* the end: Summary, Exercises (each titled by its level, at least one "By hand" and one
  "Derive"), Next (naming the following chapter), in that order.

Read from the built page (:mod:`wordcount`): the core path within its budget of words, and the
reading time the opening box states within 10% of the visible path's minutes (prose, visible
code and outputs), at most 35 (chapters still over are named in STILL_OVER_VISIBLE_BUDGET).
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from dataclasses import dataclass, field

import nbformat
import pytest
from myst_tokens import directive, h2_chunks, parse

from tests.nbharness import ROOT, chapter_paths, read_chapter, reference_path, unrecorded

sys.path.insert(0, str(ROOT / "tools"))
import wordcount  # tools/wordcount.py

LEVELS = ("By hand", "Derive", "Code", "Extend")
#: Sections that end a chapter and are not part of its core path's argument.
END_SECTIONS = ("Summary", "Exercises", "Going deeper", "Next", "References", "Further reading",
                "Appendix")
ASSERT = re.compile(r"^\s*assert\b", re.MULTILINE)


@dataclass
class Section:
    """One ``##`` section: its title, its directives and its code cells, in order."""

    title: str
    directives: list = field(default_factory=list)
    code: list = field(default_factory=list)
    text: str = ""


def sections(nb) -> list[Section]:
    """The chapter split at its ``##`` headings; the first entry is what precedes them. A
    Markdown cell that holds two headings is split between their sections."""
    found = [Section("(before the first section)")]
    for cell in nb.cells:
        if cell.cell_type == "code":
            found[-1].code.append(cell)
            continue
        for heading, chunk in h2_chunks(cell.source):
            if heading is not None:
                found.append(Section(heading))
            found[-1].directives += [d for d in map(directive, parse(chunk)) if d is not None]
            found[-1].text += "\n" + chunk
    return found


def admonitions(section: Section, title: str, css_class: str) -> list:
    return [d for d in section.directives if d.name == "admonition"
            and d.argument.strip() == title and css_class in d.options.get("class", "").split()]


def is_end(section: Section) -> bool:
    return section.title.startswith(END_SECTIONS)


CHAPTERS = chapter_paths()
IDS = [p.stem for p in CHAPTERS]


@pytest.fixture(scope="module", params=CHAPTERS, ids=IDS)
def chapter(request):
    return request.param, sections(read_chapter(request.param))


def test_opening_box_says_what_you_learn_need_and_how_long(chapter):
    path, parts = chapter
    boxes = admonitions(parts[0], "In this chapter", "chapter-opening")
    assert len(boxes) == 1, (
        f"{path.name}: put one opening box before the first ## section: ```{{admonition}} In "
        "this chapter``` with `:class: chapter-opening` (CONTRIBUTING.md, \"The chapter "
        "template\")")
    body = boxes[0].body
    outcomes = re.search(r"\*\*You will learn\*\*(.*?)\*\*You need\*\*", body, re.DOTALL)
    assert outcomes, f"{path.name}: the opening box needs **You will learn** then **You need**"
    n = len(re.findall(r"^\s*[-*] ", outcomes.group(1), re.MULTILINE))
    assert 3 <= n <= 5, f"{path.name}: the opening box lists {n} outcomes; give 3 to 5"
    assert re.search(r"\*\*Core path\*\* about \d+ minutes", body), (
        f"{path.name}: end the opening box with '**Core path** about N minutes of reading.'")


def test_first_section_opens_on_a_figure_or_control(chapter):
    path, parts = chapter
    first = parts[1] if len(parts) > 1 else parts[0]
    cells = parts[0].code + first.code
    hooks = [c for c in cells if "figure" in c.metadata.get("mystnb", {}) or "Control(" in c.source]
    assert hooks, (f"{path.name}: the first section ({first.title!r}) shows no figure (mystnb "
                   "figure metadata) or control: open on the chapter's key picture")


def test_every_core_section_with_code_asks_for_a_prediction(chapter):
    path, parts = chapter
    missing = [s.title for s in parts[1:] if s.code and not is_end(s)
               and not admonitions(s, "Predict, then run", "predict")]
    assert not missing, (
        f"{path.name}: add a ```{{admonition}} Predict, then run``` (`:class: predict`) before "
        f"a cell of each of these sections: {missing}")


def test_check_cells_are_folded_and_say_what_they_check(chapter):
    path, parts = chapter
    cells = [c for s in parts for c in s.code]
    unfolded = [c.source.splitlines()[0] for c in cells if ASSERT.search(c.source)
                and not {"check", "hide-cell"} & set(c.metadata.get("tags", []))]
    assert not unfolded, (f"{path.name}: cells that assert are checks: tag them "
                          f"[hide-input, check] (first lines: {unfolded})")
    problem = unrecorded(path)
    assert problem is None, problem
    ref = nbformat.read(reference_path(path), as_version=4)
    printed = {c.source: "".join(o.get("text", "") for o in c.get("outputs", [])
                                 if o.get("name") == "stdout")
               for c in ref.cells if c.cell_type == "code"}
    for cell in cells:
        tags = set(cell.metadata.get("tags", []))
        if "check" not in tags:
            continue
        first = cell.source.splitlines()[0]
        assert "hide-input" in tags, f"{path.name}: check cell {first!r} needs hide-input too"
        lines = printed.get(cell.source, "").splitlines()
        assert len(lines) == 1 and lines[0].startswith("Checked: "), (
            f"{path.name}: check cell {first!r} must print exactly one line 'Checked: <what>'"
            f", not {lines}")


#: Tags that fold or remove a cell's code on the site.
HIDDEN = ("hide-input", "hide-cell", "remove-input", "remove-cell")


def bound_and_used(source: str) -> tuple[set[str], set[str], set[str]]:
    """A cell's names: bound by assignment, ``def``, ``class``, ``for``, ``with`` or as a
    parameter; bound by ``import``; and read (IPython magics and shell lines left out)."""
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())
    tree = ast.parse(code)
    bound, imported, used = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):  # a function's parameter is its own
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
    return bound, imported, used


def names_only_hidden_cells_define(nb) -> list[str]:
    """``cell N uses x``, for every name a visible cell reads that no visible cell before it
    defined and a hidden cell did (imports are not counted: the setup cell's ``import lib``
    is named on the page)."""
    shown, hidden_only, found = set(), set(), []
    for num, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        bound, imported, used = bound_and_used(cell.source)
        if set(cell.metadata.get("tags", [])) & set(HIDDEN):
            hidden_only |= bound - shown
            continue
        for name in sorted((used & hidden_only) - shown - bound - set(dir(builtins))):
            found.append(f"code cell {num + 1} uses {name}")
        shown |= bound | imported
    return found


def test_visible_cells_use_no_name_that_only_a_hidden_cell_defines(chapter):
    """What the reader sees runs on what the reader has seen: a visible cell reads no name
    that only a folded cell defines (move the helper into ``lib/figures/<chapter>.py``, or
    show the cell that defines it)."""
    path, _ = chapter
    found = names_only_hidden_cells_define(read_chapter(path))
    assert not found, f"{path.name}: " + "; ".join(found)


def test_hidden_names_are_found():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import numpy as np\ndef draw(x):\n    pass",
                                  metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_code_cell("y = np.ones(2)\ndraw(y)\n%time len(y)")])
    assert names_only_hidden_cells_define(nb) == ["code cell 2 uses draw"]


def test_chapter_ends_with_summary_levelled_exercises_and_next(chapter):
    path, parts = chapter
    titles = [s.title for s in parts]
    for needed in ("Summary", "Exercises", "Next"):
        assert needed in titles, f"{path.name}: add a '## {needed}' section (the chapter's end)"
    assert titles.index("Summary") < titles.index("Exercises") < titles.index("Next"), (
        f"{path.name}: the end runs Summary, Exercises, Next, in that order")
    exercises = [d for d in parts[titles.index("Exercises")].directives if d.name == "exercise"]
    levels = [d.argument.split(" · ")[0] for d in exercises]
    unlevelled = [d.argument for d, level in zip(exercises, levels, strict=True)
                  if level not in LEVELS]
    assert exercises and not unlevelled, (
        f"{path.name}: start each exercise's title with its level, one of {LEVELS} and ' · ' "
        f"(not: {unlevelled})")
    assert {"By hand", "Derive"} <= set(levels), (
        f"{path.name}: give at least one 'By hand' and one 'Derive' exercise (has {levels})")
    assert "{doc}`" in parts[titles.index("Next")].text, (
        f"{path.name}: '## Next' names the following chapter with {{doc}}`...`")


def test_a_cell_holding_two_sections_is_split_between_them():
    """``## Next`` and ``## References`` in one Markdown cell (no ``+++`` between them): the
    link to the next chapter stays in Next."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "## Next\n\nGo on to {doc}`masks`.\n\n(sec-refs)=\n## References\n\n"
        "```{bibliography}\n```\n")])
    parts = sections(nb)
    assert [p.title for p in parts] == ["(before the first section)", "Next", "References"]
    assert "{doc}`masks`" in parts[1].text and "{doc}" not in parts[2].text
    assert "(sec-refs)=" in parts[2].text
    assert [d.name for d in parts[2].directives] == ["bibliography"]


# The budget, read from the built page.


#: Chapters whose visible path is still over VISIBLE_BUDGET_MINUTES, by name, in this one place:
#: each chapter's issue takes its name out when the chapter fits (issue 35's template).
STILL_OVER_VISIBLE_BUDGET: set[str] = set()


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_core_path_fits_its_budget_and_its_stated_reading_time(path):
    """The opening box promises the minutes of what the page shows unfolded (prose, visible
    code and outputs, :func:`wordcount.count_visible`), within 10%; those are at most
    VISIBLE_BUDGET_MINUTES, and the core prose stays within its budget of words."""
    from tests.site_build import built_site

    html = (built_site() / path.relative_to(ROOT).with_suffix(".html")).read_text("utf-8")
    count, seen = wordcount.count_html(html), wordcount.count_visible(html)
    assert count.core <= wordcount.CORE_BUDGET, (
        f"{path.name}: the core path has {count.core} words, over the budget of "
        f"{wordcount.CORE_BUDGET}: move proofs, caveats and extra experiments into Going deeper")
    stated = re.search(r"\*\*Core path\*\* about (\d+) minutes", path.read_text(encoding="utf-8"))
    assert stated, f"{path.name}: no reading time in the opening box"
    minutes = int(stated.group(1))
    assert abs(minutes - seen.minutes) <= max(1, 0.1 * seen.minutes), (
        f"{path.name}: the box says about {minutes} minutes; the page shows {seen.prose} words "
        f"of prose, {seen.code} of code and {seen.output} of output unfolded: "
        f"{seen.minutes:.0f} minutes at {wordcount.WORDS_PER_MINUTE} words a minute")
    if path.stem not in STILL_OVER_VISIBLE_BUDGET:
        assert seen.minutes <= wordcount.VISIBLE_BUDGET_MINUTES, (
            f"{path.name}: {seen.minutes:.0f} visible minutes, over the budget of "
            f"{wordcount.VISIBLE_BUDGET_MINUTES}: hide the plumbing (figures, controls, tables) "
            "and fold what the path does not need")
    else:
        assert seen.minutes > wordcount.VISIBLE_BUDGET_MINUTES, (
            f"{path.name} fits its budget now: take it out of STILL_OVER_VISIBLE_BUDGET")


def test_visible_count_leaves_out_folded_cells_deeper_and_exercises():
    page = ('<article class="bd-article"><section><h1>A title</h1><p>one two</p>'
            '<div class="cell"><div class="cell_input"><pre>y = np.ones(3)</pre></div>'
            '<div class="cell_output"><pre>[1. 1. 1.]</pre></div></div>'
            '<div class="cell"><details class="hide above-input"><pre>plot(y)</pre></details>'
            '<div class="cell_output"><p>caption words</p></div></div>'
            '<details class="folded-output"><p>the answer</p></details>'
            '<div class="admonition dropdown going-deeper"><p>five six</p></div>'
            '</section></article>')
    assert wordcount.count_visible(page) == wordcount.Visible(prose=4, code=4, output=5)


def test_counter_leaves_out_code_math_deeper_and_exercises():
    page = ('<article class="bd-article"><section><h1>A title</h1><p>one two three four</p>'
            '<div class="cell docutils container"><pre>print(1)</pre></div>'
            '<div class="math notranslate nohighlight">\\[x^2\\]</div>'
            '<div class="admonition dropdown going-deeper"><p>five six</p></div>'
            '<div class="exercise admonition"><p>seven</p></div>'
            '<section><h2>Going deeper<a class="headerlink">#</a></h2><p>eight nine</p></section>'
            '</section></article>')
    assert wordcount.count_html(page) == wordcount.Count(core=6, total=13)


def test_front_door_lists_every_chapter_with_its_question_and_reading_time():
    """book/intro.md's table of chapters: every chapter, its question, and the core reading
    time its opening box states."""
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    rows = {m["name"]: m for m in re.finditer(
        r"^\| \{doc\}`(?:[^`<]*<)?(?P<name>[\w-]+)>?` \| (?P<question>[^|]+\?) \| "
        r"(?P<min>\d+) min \|",
        intro, re.MULTILINE)}
    for path in CHAPTERS:
        assert path.stem in rows, (
            f"book/intro.md: add {path.stem} to the table of chapters: "
            "| {doc}`name` | its question? | N min | what it builds on |")
        box = re.search(r"\*\*Core path\*\* about (\d+) minutes", path.read_text("utf-8"))
        assert box, f"{path.name}: no reading time in its opening box"
        assert rows[path.stem]["min"] == box.group(1), (
            f"book/intro.md says {path.stem} takes {rows[path.stem]['min']} min; its "
            f"opening box says {box.group(1)}: make them agree")


def test_scaffold_writes_a_chapter_in_the_template(tmp_path, monkeypatch, capsys):
    """``make chapter`` (tools/new_chapter.py), run on a copy of the book's table of contents
    and front door, writes a chapter these checks accept, lists it in both, and writes its
    links with their text (what tools/lab_compat.py would otherwise rewrite)."""
    import lab_compat  # tools/
    import new_chapter

    (tmp_path / "book").mkdir()
    for name in ("_toc.yml", "book/intro.md"):
        (tmp_path / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(new_chapter, "ROOT", tmp_path)
    assert new_chapter.main(["toy-topic", "Attention", "--title", "Toy topic"]) == 0
    path = tmp_path / "book" / "toy-topic.md"
    parts = sections(read_chapter(path))
    for check in (test_opening_box_says_what_you_learn_need_and_how_long,
                  test_first_section_opens_on_a_figure_or_control,
                  test_every_core_section_with_code_asks_for_a_prediction,
                  test_chapter_ends_with_summary_levelled_exercises_and_next,
                  test_visible_cells_use_no_name_that_only_a_hidden_cell_defines):
        check((path, parts))
    assert "      - file: book/toy-topic\n" in (tmp_path / "_toc.yml").read_text()
    intro = (tmp_path / "book" / "intro.md").read_text(encoding="utf-8")
    assert "| {doc}`Toy topic <toy-topic>` |" in intro
    for text in (path.read_text(encoding="utf-8"), intro):
        assert not lab_compat.BARE_DOC.search(text) and not lab_compat.BARE_REF.search(text)
    assert "Reading paths" in capsys.readouterr().out  # the author is told what else to edit
