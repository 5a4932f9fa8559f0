"""The downloads run where readers open them: a clean Python with only ``lib`` installed.

A reader who downloads a chapter's executed notebook from the site runs it in Colab, in a
hosted Jupyter or in a Python of their own, after the install line of its first cell. This
module does what they do, beside the rest of the suite, in a thread of its own (started right
after collection, ``tests/conftest.py``):

1. builds ``lib`` as pip builds it from the repository (a wheel, not ``-e .``);
2. makes a fresh virtual environment and installs that wheel with nothing but its declared
   dependencies, and ``ipykernel`` (pip's cache makes this a matter of seconds);
3. runs every chapter's downloaded ``.ipynb``, from the built site, top to bottom in an empty
   folder, on a kernel of that environment.

A missing dependency, a file read through the repository's layout or an error in any cell fails
the chapter's test. ``pyproject.toml`` holds the lower bounds; CONTRIBUTING.md ("Versions and
pins") says which versions were tried.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import nbformat
import pytest

from tests.background import Background
from tests.nbharness import ROOT
from tests.site_build import built_site, chapter_names

#: The quiet-machine limit (:mod:`tests.timeouts`) for waiting on the set-up and every run up
#: to a chapter's, and for one notebook's cell.
LIMIT = 600.0
CELL_TIMEOUT = 120


def downloaded_notebook(site: Path, chapter: str) -> Path:
    """The ``.ipynb`` that ``<chapter>.html``'s download menu offers."""
    from tests.test_downloads import download_links

    page = site / f"{chapter}.html"
    links = download_links(page.read_text(encoding="utf-8"))
    if not links:
        raise AssertionError(f"{chapter}.html offers no .ipynb download")
    return (page.parent / links[0]).resolve()


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
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    wheel = next(wheels.glob("*.whl"))
    proc = subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", str(wheel), "ipykernel", *pins],
                          capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"pip install of {wheel.name} failed:\n{proc.stderr[-3000:]}")
    return python


def kernel_manager(python: Path, where: Path):
    """A kernel manager whose kernel is ``python`` (a kernel spec of its own, in ``where``)."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec = where / "kernels" / "clean"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "clean lib", "language": "python"}))
    return KernelManager(kernel_name="clean",
                         kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)]))


def run_notebook(path: Path, python: Path, where: Path) -> list[str]:
    """Run the notebook at ``path`` top to bottom in an empty folder on ``python``'s kernel;
    the problems: the first cell that failed, with its error."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    folder = Path(tempfile.mkdtemp(prefix=f"{path.stem}-", dir=where))
    client = NotebookClient(nb, km=kernel_manager(python, where), timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))  # the traceback's colours
        return [f"{path.name} stops in a clean environment:\n{plain[-2500:]}"]
    left = sorted(p.name for p in folder.iterdir())
    return [f"{path.name} left files in the reader's folder: {left}"] if left else []


class CleanRuns(Background):
    """Every chapter's download, run in one clean environment made once (a job: a chapter)."""

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
            yield lambda chapter: run_notebook(downloaded_notebook(site, chapter), python, where)

    def describe(self, job) -> str:
        return f"clean-environment run of {job}"


RUNS = CleanRuns()


@pytest.mark.parametrize("chapter", chapter_names())
def test_download_runs_in_a_clean_environment(chapter):
    """The chapter's downloaded notebook runs top to bottom, in an empty folder, in a fresh
    virtual environment holding only the ``lib`` wheel, its declared dependencies and a
    kernel (see the module docstring)."""
    problems = RUNS.result(chapter)
    assert not problems, "\n".join(problems)
