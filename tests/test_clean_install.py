"""The downloads run where readers open them: a clean Python with only ``lib`` installed.

A reader who downloads a chapter's executed notebook from the site runs it in Colab, in a
hosted Jupyter or in a Python of their own, after the install line of its first cell. This
module does what they do, beside the rest of the suite, in a thread of its own (started right
after collection, ``tests/conftest.py``):

1. builds ``lib`` as pip builds it from the repository (a wheel, not ``-e .``);
2. makes a fresh virtual environment and installs that wheel with nothing but its declared
   dependencies, and ``ipykernel`` (pip's cache makes this a matter of seconds);
3. runs every chapter's downloaded ``.ipynb``, from the built site, top to bottom, each in an
   empty folder of its own, on a kernel of that environment: under nbval (``tests/nbharness.py``,
   ``--notebooks``), which also compares every output with ``tests/reference/``, on the emulated
   processor :data:`tests.test_portability.CLEAN`, whose test reads those comparisons.

The kernels share the checkout's frame cache (``lib/widgets/cache.py``): a control's frames
are reused only under the same key (``lib``'s files, the versions of Python, numpy,
matplotlib and Pillow, every input the kernel has run), that is, only when drawing them again
would draw the same frames; with newer packages than the pinned ones the key differs and
every frame is drawn, as a reader's kernel draws it.

An error in any cell (a missing dependency, a file read through the repository's layout) or a
file left in the reader's folder fails the chapter's test here; an output that differs fails it
in ``tests/test_portability.py``. ``pyproject.toml`` holds the lower bounds; CONTRIBUTING.md
("Versions and pins") says which versions were tried.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import pytest

from lib.widgets import cache
from tests import test_portability, timeouts
from tests.background import Background
from tests.nbharness import ROOT
from tests.site_build import built_site, chapter_names, downloaded_notebook
from tests.test_portability import CLEAN

#: The quiet-machine limit (:mod:`tests.timeouts`) for waiting on the set-up and every run up
#: to a chapter's, and for one notebook's cell.
LIMIT = 600.0
CELL_TIMEOUT = 120


def clean_environment(where: Path, *pins: str) -> Path:
    """A fresh virtual environment in ``where`` with the ``lib`` wheel, its declared
    dependencies and ``ipykernel`` (and ``pins``, such as ``numpy==2.0.2``, to try the lower
    bounds); returns its Python."""
    wheels = where / "wheel"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "--disable-pip-version-check", str(ROOT), "-w", str(wheels)],
                          capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"pip could not build lib's wheel:\n{proc.stderr[-3000:]}")
    env = where / "env"
    venv.create(env)  # no pip of its own: this environment's pip installs into it (--python)
    python = env / "bin" / "python"
    wheel = next(wheels.glob("*.whl"))
    # --no-compile: a kernel compiles what it imports, not every module of every package
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--quiet", "--no-compile", "--disable-pip-version-check", str(wheel),
                           "ipykernel", *pins], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"pip install of {wheel.name} failed:\n{proc.stderr[-3000:]}")
    return python


def kernel_spec(python: Path, where: Path) -> Path:
    """A Jupyter data folder (for ``JUPYTER_PATH``) whose kernel ``clean-lib`` is ``python``."""
    spec = where / "jupyter" / "kernels" / "clean-lib"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "clean lib", "language": "python"}))
    return where / "jupyter"


def outcome(chapter: str, readers: Path) -> list[str]:
    """What went wrong when the chapter's download ran, apart from outputs that differ
    (:mod:`tests.test_portability` reports those): errors, cells that did not run, files left
    in the reader's folder."""
    name = Path(chapter).name
    cells, failed = test_portability.chapter_failures(test_portability.report(CLEAN), name)
    if not cells:
        return [f"{name}.ipynb did not run (log: {test_portability.log(CLEAN)})"]
    problems = [f"{name}.ipynb stops in a clean environment: {f}" for f in failed
                if "Cell outputs differ" not in f]
    folder = readers / name
    left = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    if left:
        problems.append(f"{name}.ipynb left files in the reader's folder: {left}")
    return problems


class CleanRuns(Background):
    """Every chapter's download, run in one clean environment made once, by one nbval process
    (a job: a chapter; its result is read from that run's report)."""

    name = "clean-install"
    limit = LIMIT

    def default_jobs(self) -> list[str]:
        return chapter_names()

    @contextlib.contextmanager
    def session(self):
        with tempfile.TemporaryDirectory(prefix="clean-lib-") as tmp:
            where = Path(tmp)
            python = clean_environment(where)
            site = built_site()
            readers = where / "readers"
            test_portability.nbval_run(
                CLEAN, [str(downloaded_notebook(site, c)) for c in self.jobs],
                "--notebooks", "--outputs-from=kernel", "--nbval-kernel-name=clean-lib",
                f"--kernel-cwd={readers}", f"--nbval-cell-timeout={CELL_TIMEOUT}",
                env={"JUPYTER_PATH": str(kernel_spec(python, where)),
                     # the checkout's frame cache (lib/widgets/cache.py): a control's frames
                     # are reused only under the same key (lib's files, the versions of
                     # Python, numpy, matplotlib and Pillow, every input run so far), so
                     # only when drawing them again would draw the same frames
                     cache.ENV: str(cache.folder())},
                timeout=timeouts.seconds(LIMIT))
            yield lambda chapter: outcome(chapter, readers)

    def describe(self, job) -> str:
        return f"clean-environment run of {job}"


RUNS = CleanRuns()


@pytest.mark.parametrize("chapter", chapter_names())
def test_download_runs_in_a_clean_environment(chapter):
    """The chapter's downloaded notebook runs top to bottom with no error and leaves no file,
    in an empty folder, in a fresh virtual environment holding only the ``lib`` wheel, its
    declared dependencies and a kernel (see the module docstring)."""
    problems = RUNS.result(chapter)
    assert not problems, "\n".join(problems)
