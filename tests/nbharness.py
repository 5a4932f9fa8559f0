"""pytest plugin: compare every MyST chapter's outputs with committed references, under nbval.

The chapters in ``_toc.yml`` are the single source. For each one this plugin

1. reads the ``.md`` with jupytext (no converted copy is written or committed);
2. pairs each code cell with the cell of ``tests/reference/<chapter>.ipynb`` whose source is
   identical (cells are aligned with difflib, so an edit fails only the cells it touches);
3. hands the cells to nbval, which compares every output (strict mode: stdout, stderr,
   ``text/plain``, ``text/html``, glue records) after the substitutions in
   ``tests/sanitize.cfg``, with the outputs of ``--outputs-from``:

   * ``site`` (the default): the executed notebook the built site offers for download (the
     build ran the chapter natively; it runs first if it has not), so what the site shows is
     what is checked;
   * ``kernel``: nbval executes the cells now, in a fresh kernel of this environment (or of
     ``--nbval-kernel-name``'s, in an empty folder with ``--kernel-cwd``): ``make
     references``, the clean-environment run of ``tests/test_clean_install.py``;
   * a folder: the ``<chapter>.ipynb`` another run kept there (the JupyterLab walks').

A code cell with no reference, or whose reference was made from different source, fails with a
message that says so. ``pytest --regen-references`` (``make references``) executes the cells
under nbval and writes the reference notebooks from what it captured, so the references are
nbval's own outputs, never another executor's. ``--notebooks`` collects the ``.ipynb`` files
named on the command line (the site's downloads) as chapters, paired with their references by
name.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, RunningKernel
from nbval.plugin import (
    IPyNbCell,
    IPyNbFile,
    NbCellError,
    coalesce_streams,
    find_comment_markers,
    find_metadata_tags,
    get_sanitize_patterns,
)

from tools.execute import toc_files

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_DIR = ROOT / "tests" / "reference"
SANITIZE_FILE = ROOT / "tests" / "sanitize.cfg"
#: Output data that are not compared by nbval and are left out of the references.
DROPPED_MIME = ("image/png", "image/jpeg", "image/svg+xml",
                "application/vnd.jupyter.widget-view+json")


@functools.cache
def chapter_paths() -> tuple[Path, ...]:
    """The documents of the book that contain code cells (the executable chapters)."""
    return tuple(p for p in toc_files() if code_cells(read_chapter(p)))


#: Child processes started ahead of the test that reads them (:func:`start_child`).
_children: dict[str, subprocess.Popen] = {}


def start_child(code: str) -> None:
    """Start ``code`` in a child process now, if it is not running already; the test that
    needs its result collects it later with :func:`json_from_child`. ``tests/conftest.py``
    starts the slow ones right after collection, so they overlap the rest of the suite."""
    if code not in _children:
        _children[code] = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, text=True,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stop_children() -> None:
    """Stop the children no test collected (a run cut short by -x or Ctrl-C)."""
    while _children:
        _, child = _children.popitem()
        child.kill()
        child.communicate()


def json_from_child(code: str):
    """What ``code``, run by this Python in a child process at the project's root, writes to
    stdout as JSON (started now, unless :func:`start_child` started it earlier). For
    measurements a process must make alone: tracemalloc counts the allocations of every thread
    of a process, and the suite's page checks, walks and clean-environment runs allocate in
    threads of their own; and for slow computations that should overlap the suite."""
    start_child(code)
    child = _children.pop(code)
    out, err = child.communicate()
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, child.args, out, err)
    return json.loads(out)


def read_chapter(path: Path) -> nbformat.NotebookNode:
    """The chapter as a notebook, read from its MyST source."""
    return jupytext.read(path, fmt="md:myst")


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def reference_path(path: Path) -> Path:
    return REFERENCE_DIR / f"{path.stem}.ipynb"


def sanitize_patterns() -> list[tuple[str, str]]:
    return get_sanitize_patterns(SANITIZE_FILE.read_text())


def sanitize(text: str, patterns=None) -> str:
    for regex, replace in patterns if patterns is not None else sanitize_patterns():
        text = re.sub(regex, replace, text)
    return text


def attach_references(nb, ref_path: Path) -> list[str | None]:
    """Copy reference outputs onto ``nb``'s code cells; return, per cell, why it has none."""
    cells = code_cells(nb)
    if not ref_path.exists():
        shown = ref_path.relative_to(ROOT) if ref_path.is_relative_to(ROOT) else ref_path
        return [f"no reference file {shown}"] * len(cells)
    ref_cells = code_cells(nbformat.read(ref_path, as_version=4))
    problems: list[str | None] = ["its source differs from every reference cell "
                                  "(new or edited cell)"] * len(cells)
    matcher = difflib.SequenceMatcher(a=[c.source for c in cells],
                                      b=[c.source for c in ref_cells], autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for i in range(size):
            ref = ref_cells[b + i]
            cells[a + i].outputs = ref.outputs
            cells[a + i].execution_count = ref.execution_count
            problems[a + i] = None
            if ref.execution_count is None:
                problems[a + i] = "its reference cell was never executed"
    return problems


def unrecorded(path: Path, ref_path: Path | None = None) -> str | None:
    """Why the chapter at ``path`` cannot be read from its reference outputs (``ref_path``,
    by default ``tests/reference/<chapter>.ipynb``), or ``None``:
    a missing reference, or code cells new or edited since it was written. Tests that read
    what the chapter prints from ``tests/reference/`` say this first, rather than report the
    figures as not printed."""
    ref_path = ref_path or reference_path(path)
    record = f"`make references CHAPTER={path.stem}` (then review the diff of tests/reference/)"
    if not ref_path.exists():
        return f"{path.name} has no reference outputs yet: record them with {record}"
    recorded = {c.source for c in code_cells(nbformat.read(ref_path, as_version=4))}
    new = [(c.source.splitlines() or [""])[0] for c in code_cells(read_chapter(path))
           if c.source not in recorded]
    if new:
        return (f"{path.name}: {len(new)} code cells are new or edited since the reference "
                f"outputs were recorded (first lines: {new[:3]}); nothing they print is known "
                f"yet: record them with {record}")
    return None


class HistoryKernel(RunningKernel):
    """nbval's kernel, but each cell is run as a notebook front end runs it: into the kernel's
    history (nbval passes ``store_history=False``). The controls' frame cache
    (:mod:`lib.widgets.cache`) keys on that history, so that a chapter run here, by the site's
    build and in JupyterLab draws its frames once."""

    def execute_cell_input(self, cell_input, allow_stdin=None):
        return self.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin,
                               stop_on_error=False)


class ChapterFile(IPyNbFile):
    """A MyST chapter, collected as a notebook of nbval cells."""

    def collect(self):
        self.nb = (read_chapter(self.path) if self.path.suffix == ".md"
                   else nbformat.read(self.path, as_version=4))
        problems = attach_references(self.nb, reference_path(self.path))
        self.captured = {}
        for num, (cell, problem) in enumerate(zip(code_cells(self.nb), problems, strict=True)):
            options = defaultdict(bool, find_metadata_tags(cell.metadata))
            options.update(dict(find_comment_markers(cell.source)))
            options.setdefault("check", True)
            yield ChapterCell.from_parent(self, name=f"Cell {num}", cell_num=num, cell=cell,
                                          options=options, problem=problem)

    def setup(self):
        self.sanitize_patterns.update(sanitize_patterns())
        source = outputs_from(self.config)
        if source != "kernel":
            self.stored = stored_cells(self.nb, stored_notebook(source, self.path))
            return
        # This environment's interpreter (the one running pytest) unless nbval's
        # --nbval-kernel-name names another; cwd: the chapter's folder, or its own empty
        # folder under --kernel-cwd (a reader's).
        cwd = self.path.parent
        if self.config.option.kernel_cwd:
            cwd = Path(self.config.option.kernel_cwd) / self.path.stem
            cwd.mkdir(parents=True, exist_ok=True)
        self.kernel = HistoryKernel(
            self.config.option.nbval_kernel_name or CURRENT_ENV_KERNEL_NAME, cwd=str(cwd),
            startup_timeout=self.config.option.nbval_kernel_startup_timeout,
        )

    def teardown(self):
        super().teardown()
        if self.config.option.regen_references:
            write_reference(self)


class ChapterCell(IPyNbCell):
    def __init__(self, *args, problem=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.problem = problem

    def runtest(self):
        if outputs_from(self.config) != "kernel":
            return self.compare_stored()
        regen = self.config.option.regen_references
        if regen:
            self.options["check"] = False
        super().runtest()  # executes the cell; compares outputs unless regenerating
        if regen:
            self.parent.captured[self.cell_num] = self.test_outputs
        elif self.problem and self.options["check"] and not self.options["skip"]:
            raise NbCellError(
                self.cell_num,
                f"No reference output for this cell: {self.problem}. Run `make references` "
                "and review the diff of tests/reference/.",
                self.cell.source,
            )

    def compare_stored(self):
        """nbval's comparison (:meth:`IPyNbCell.runtest` without the kernel) of the outputs
        another run stored (the site's build, a JupyterLab session) with the reference."""
        if self.options["skip"]:
            pytest.skip()
        stored = self.parent.stored[self.cell_num]
        if isinstance(stored, str):
            self.raise_cell_error(stored)
        self.test_outputs = outs = coalesce_streams(stored)
        errors = [o for o in outs if o.output_type == "error"]
        if errors and not self.options["check_exception"]:
            self.raise_cell_error("Cell execution caused an exception",
                                  "\n" + "\n".join(errors[0].get("traceback", [])))
        if self.problem and self.options["check"]:
            raise NbCellError(self.cell_num, f"No reference output for this cell: {self.problem}.",
                              self.cell.source)
        if (self.options["check"] and self.cell.execution_count is not None
                and not self.compare_outputs(outs, coalesce_streams(self.cell.outputs))):
            self.raise_cell_error("Cell outputs differ", "\n".join(self.comparison_traceback))

    def reportinfo(self):
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return self.path, 0, f"{shown}::Cell {self.cell_num}"


def outputs_from(config) -> str:
    """Where the chapters' outputs come from: ``kernel`` (run now, as ``make references``
    always does), ``site`` or a folder (see ``--outputs-from``)."""
    return "kernel" if config.option.regen_references else config.option.outputs_from


def stored_notebook(source: str, chapter: Path) -> Path:
    """The executed notebook that holds ``chapter``'s outputs: the one the built site offers
    for download (``site``; the build runs first if it has not), or ``<source>/<chapter>.ipynb``."""
    if source == "site":
        from tests import site_build  # it imports this module

        return site_build.downloaded_notebook(site_build.built_site(),
                                              str(chapter.relative_to(ROOT).with_suffix("")))
    return Path(source) / f"{chapter.stem}.ipynb"


def stored_cells(nb, path: Path) -> list:
    """Per code cell of ``nb``, the outputs the notebook at ``path`` stored for the cell with
    the same source (paired in order, as :func:`attach_references` pairs), or why there are
    none."""
    if not path.exists():
        return [f"no executed notebook {path}"] * len(code_cells(nb))
    done = code_cells(nbformat.read(path, as_version=4))
    cells = code_cells(nb)
    if [c.source for c in done] != [c.source for c in cells]:
        return [f"{path} holds other code than the chapter (is it out of date?)"] * len(cells)
    if not any(c.outputs for c in done):  # the site's build leaves out execution counts
        return [f"{path} holds no outputs: it was not executed"] * len(cells)
    return [[nbformat.from_dict(dict(o)) for o in c.outputs] for c in done]


def clean_outputs(outputs, patterns) -> list:
    """Outputs as stored in a reference: sanitized, without the data nbval never compares."""
    cleaned = []
    for out in outputs:
        out = nbformat.from_dict(dict(out))
        if out.output_type == "execute_result":
            out.pop("execution_count", None)
            out.output_type = "display_data"  # the count is not compared; keep files stable
        if "data" in out:
            out.data = {k: sanitize(v, patterns) if isinstance(v, str) else v
                        for k, v in out.data.items() if k not in DROPPED_MIME}
            out.metadata = {}
        if "text" in out:
            out.text = sanitize(out.text, patterns)
        cleaned.append(out)
    return cleaned


def write_reference(chapter: ChapterFile) -> None:
    cells = code_cells(chapter.nb)
    if len(chapter.captured) != len(cells):
        missing = sorted(set(range(len(cells))) - set(chapter.captured))
        print(f"\nnot writing {reference_path(chapter.path).name}: cells {missing} did not run")
        return
    patterns = sanitize_patterns()
    # A cell exempt from comparison (timings) keeps its stored outputs when its source is
    # unchanged, so regenerating one chapter leaves a diff of what changed, not of the clock.
    old_path = reference_path(chapter.path)
    kept = ({c.source: c.outputs for c in nbformat.read(old_path, as_version=4).cells}
            if old_path.exists() else {})
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": chapter.nb.metadata.get("kernelspec", {}),
                   "source": str(chapter.path.relative_to(ROOT))}
    seen = set()
    for num, cell in enumerate(cells):
        ref = nbformat.v4.new_code_cell(source=cell.source)
        ref.id = hashlib.sha1(cell.source.encode()).hexdigest()[:8]
        while ref.id in seen:  # identical sources: keep ids unique and stable
            ref.id = hashlib.sha1(ref.id.encode()).hexdigest()[:8]
        seen.add(ref.id)
        ref.execution_count = num + 1
        exempt = "nbval-ignore-output" in cell.metadata.get("tags", [])
        ref.outputs = (kept[cell.source] if exempt and cell.source in kept
                       else clean_outputs(chapter.captured[num], patterns))
        nb.cells.append(ref)
    REFERENCE_DIR.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, reference_path(chapter.path))


def pytest_addoption(parser):
    parser.addoption("--regen-references", action="store_true", default=False,
                     help="execute the chapters under nbval and rewrite tests/reference/")
    parser.addoption(
        "--outputs-from", metavar="SOURCE", default="site",
        help="where the outputs compared with tests/reference/ come from: 'site' (default: the "
             "executed notebooks the built site offers for download; the build runs first), "
             "'kernel' (execute the chapters now, in a fresh kernel each), or a folder of "
             "executed <chapter>.ipynb")
    parser.addoption("--kernel-cwd", metavar="DIR", default=None,
                     help="with --outputs-from=kernel: run each chapter in an empty folder "
                          "DIR/<chapter> (a reader's) instead of the chapter's own folder")
    parser.addoption("--notebooks", action="store_true", default=False,
                     help="collect the .ipynb files named on the command line as chapters "
                          "(the site's downloads), paired with tests/reference/ by name")


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".md" and file_path in chapter_paths():
        return ChapterFile.from_parent(parent, path=file_path)
    if (file_path.suffix == ".ipynb" and parent.config.option.notebooks
            and file_path.stem in {p.stem for p in chapter_paths()}):
        return ChapterFile.from_parent(parent, path=file_path)
    return None
