"""What every test shares: a headless matplotlib, the book's tools, and a chapter's own cells.

* ``matplotlib.use("Agg")`` here, once, before any test imports pyplot, and one BLAS thread;
* ``tools/sphinx_ext`` on ``sys.path``, so tests import :mod:`myst_tokens` and
  :mod:`notebook_export` as the build does;
* :func:`chapter_cell`, the one way a test runs a chapter's code cell (found by its tag) to
  compare what the chapter derives in the open with what ``lib`` exports;
* the start of the site's build (``tests/site_build.py``), of the JupyterLab walks of
  ``tests/test_jupyterlab.py``, of the page checks of ``tests/test_browser.py`` and of the
  clean-environment runs of ``tests/test_clean_install.py`` (the walks and the clean runs
  are also the emulated-CPU runs of ``tests/test_portability.py``) right after collection,
  so that they overlap the rest of the suite, and their stop at the end of the session.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

matplotlib.use("Agg")

import lib
from tests.nbharness import ROOT, code_cells, read_chapter, start_child, stop_children

sys.path.insert(0, str(ROOT / "tools" / "sphinx_ext"))
# One BLAS thread in the test processes (each xdist worker): the workers and the background
# runs keep both cores busy, and on a busy machine OpenBLAS's threads spin waiting for each
# other (a test of 4 s took 15). Children (kernels, the site's build) keep their own count.
threadpool_limits(1, user_api="blas")


def chapter_cell(chapter: str | Path, tag: str, ns: dict | None = None) -> dict:
    """Run the code cell of ``book/<chapter>.md`` (or a path) tagged ``tag``; return ``ns``.

    ``ns`` starts as ``{"np": np, "lib": lib}``; pass the namespace of an earlier cell to run a
    cell that uses what that one defined. The cell's printed output is discarded.
    """
    path = chapter if isinstance(chapter, Path) else ROOT / "book" / f"{chapter}.md"
    cells = [c for c in code_cells(read_chapter(path)) if tag in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r} in {chapter}, found {len(cells)}"
    ns = {"np": np, "lib": lib} if ns is None else ns
    with contextlib.redirect_stdout(io.StringIO()):
        exec(cells[0].source, ns)
    return ns


#: The tests that wait for the page checks' thread, and for the clean-environment runs'.
PAGE_CHECKS = ("tests/test_browser.py::test_page_in_browser",
               "tests/test_browser.py::test_page_on_a_phone",
               "tests/test_browser.py::test_math_and_code_colours_contrast")
CLEAN_RUNS = "tests/test_clean_install.py::test_download_runs_in_a_clean_environment"
#: Slow computations a test reads from a child process (:func:`tests.nbharness.json_from_child`),
#: started right after collection so that they overlap the suite: the test (a node-id prefix)
#: → the module and the name of the child's code.
EARLY_CHILDREN = {
    "tests/test_seedsim.py::test_reference_reproduces_the_note": ("tests.test_seedsim",
                                                                   "REFERENCE_CHILD"),
    "tests/test_cost.py::test_memory_counts_match_tracemalloc": ("tests.test_cost",
                                                                  "PEAKS_CHILD"),
}
#: Tests that only wait for work running in the background (the emulated-CPU runs, the
#: JupyterLab walks, the page checks, the clean-environment runs): they go last, so that the
#: rest of the suite runs while they work.
WAITING = ("tests/test_portability.py::test_chapters",
           "tests/test_jupyterlab.py::test_chapter_in_jupyterlab", *PAGE_CHECKS, CLEAN_RUNS)


def reads_site(nodeid: str, config) -> bool:
    """Whether the test reads the built site: its modules' tests (:data:`site_build.USERS`),
    and the chapters' cells when their outputs come from the site (``--outputs-from=site``,
    the default: ``tests/nbharness.py``)."""
    from tests import site_build
    from tests.nbharness import outputs_from

    return nodeid.startswith(site_build.USERS) or (
        nodeid.startswith("book/") and outputs_from(config) == "site")


def in_background_group(nodeid: str, config) -> bool:
    """Whether the test reads the built site or waits for a background run: under pytest-xdist
    these all run in one worker, the one whose threads do that work."""
    return nodeid.startswith(WAITING) or reads_site(nodeid, config)


def is_worker(config) -> bool:
    """Whether this process is one of pytest-xdist's workers."""
    return hasattr(config, "workerinput")


def pytest_collection_modifyitems(items):
    """Order the tests in three groups (a stable sort: the order within each group is kept):
    those that need nothing from the background first, then those that read the built site
    (the build runs meanwhile, so the main thread does not sit waiting for it), and last those
    that wait for the background runs.

    Under pytest-xdist (``-n auto``, the default in ``pyproject.toml``) the last two groups
    form one unit of work, sent whole to one worker (it is the largest, so it goes out first),
    and each chapter's nbval cells form one (they share a kernel, in order); the other tests
    spread over the workers (:func:`pytest_xdist_make_scheduler`).
    """
    def group(item) -> int:
        return 2 if item.nodeid.startswith(WAITING) else int(reads_site(item.nodeid, item.config))

    items.sort(key=group)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduler, with this suite's units of work: the background group, each
    chapter's nbval cells, and every other test on its own."""
    from xdist.scheduler import LoadScopeScheduling

    class SuiteScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if in_background_group(nodeid, self.config):
                return "background"
            return nodeid.split("::")[0] if nodeid.startswith("book/") else nodeid

    return SuiteScheduling(config, log)


def pytest_collection_finish(session):
    """Start the background work now, so that it overlaps the rest of the suite; in an xdist
    worker, when the worker that has the background group starts on it
    (:func:`pytest_runtest_setup`)."""
    if session.config.option.collectonly or is_worker(session.config):
        return
    start_background(session)
    for test, (module, code) in EARLY_CHILDREN.items():
        if any(item.nodeid.startswith(test) for item in session.items):
            start_child(getattr(importlib.import_module(module), code))


_background_started = False


def pytest_runtest_setup(item):
    """In an xdist worker, start the background work before the first test of its group."""
    global _background_started
    if (not _background_started and is_worker(item.config)
            and in_background_group(item.nodeid, item.config)):
        _background_started = True
        start_background(item.session)


def start_background(session) -> None:
    """Start the site's build, the clean-environment runs, the walks through the chapters in
    JupyterLab and the page checks, for the tests collected. The two emulated processors of
    ``tests/test_portability.py`` are those of the clean-environment runs and of the walks: a
    chapter that test needs on one of them is run there, even if that run's own test was not
    collected."""
    from tests import site_build, test_portability

    config = session.config
    if any(reads_site(item.nodeid, config) for item in session.items):
        site_build.start()
    emulated = {name: [] for name in test_portability.CONFIGS}
    for item in session.items:
        if item.nodeid.startswith("tests/test_portability.py::test_chapters"):
            chapters = emulated[item.callspec.params["config"]]
            if item.callspec.params["chapter"] not in chapters:
                chapters.append(item.callspec.params["chapter"])
    walks = [item.callspec.params["chapter"] for item in session.items
             if item.nodeid.startswith("tests/test_jupyterlab.py::test_chapter_in_jupyterlab")]
    on_lab = emulated[test_portability.LAB]
    if walks or on_lab:
        from tests import test_jupyterlab

        if test_jupyterlab.WALKS.available():
            paths = {p.stem: p for p in test_jupyterlab.chapter_paths()}
            walks += [paths[c] for c in on_lab if paths[c] not in walks]
            test_jupyterlab.WALKS.start(walks + ([test_jupyterlab.OUTPUTS] if on_lab else []))
        elif on_lab:
            test_portability.start(on_lab)
    checks = [item for item in session.items if item.nodeid.startswith(PAGE_CHECKS)]
    if checks:
        from tests import test_browser

        test_browser.PAGES.start([test_browser.PageChecks.job(item) for item in checks])
    clean = [item.callspec.params["chapter"] for item in session.items
             if item.nodeid.startswith(CLEAN_RUNS)]
    names = {Path(name).name: name for name in site_build.chapter_names()}
    clean += [names[c] for c in emulated[test_portability.CLEAN] if names[c] not in clean]
    if clean:
        from tests import test_clean_install

        test_clean_install.RUNS.start(clean)


def pytest_sessionfinish(session):
    """Stop emulated-CPU runs and walks that no test waited for (a run cut short by -x or
    Ctrl-C)."""
    from tests import test_portability

    test_portability.stop()
    stop_children()
    if "tests.test_jupyterlab" in sys.modules:
        sys.modules["tests.test_jupyterlab"].WALKS.stop()
    if "tests.test_browser" in sys.modules:
        sys.modules["tests.test_browser"].PAGES.stop()
    if "tests.test_clean_install" in sys.modules:
        sys.modules["tests.test_clean_install"].RUNS.stop()


def pytest_terminal_summary(terminalreporter):
    """Say, in one line at the end, which checks were skipped because Chromium is missing."""
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if "chromium" in str(r.longrepr).lower()]
    if skipped:
        modules = sorted({r.nodeid.split("::")[0] for r in skipped})
        terminalreporter.write_line(
            f"{len(skipped)} browser checks SKIPPED ({', '.join(modules)}): Chromium is not "
            "installed. For a full run: apt-get install -y chromium", yellow=True, bold=True)
