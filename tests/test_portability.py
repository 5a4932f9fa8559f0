"""The chapters print the same figures on other processors.

numpy picks its SIMD kernels (AVX-512, AVX2, ...) and OpenBLAS its matrix kernels by the CPU
it runs on, and the two change results in the last bits. Both can be cut down on this machine:
``NPY_DISABLE_CPU_FEATURES`` switches off numpy's dispatch targets and ``OPENBLAS_CORETYPE``
forces an OpenBLAS kernel; the chapters' kernels inherit both. Two emulated machines
(:data:`CONFIGS`) execute every chapter, and nbval compares each chapter's outputs with the same
committed references as the main run (``tests/nbharness.py``), so a figure that depends on the
processor fails here.

Neither machine costs a run of the chapters of its own: each is the machine of a run the suite
makes anyway.

* :data:`CLEAN` (numpy without AVX-512, OpenBLAS's Haswell kernels, one thread) is the
  machine of the clean-environment run (``tests/test_clean_install.py``): the site's
  downloaded notebooks, executed by nbval in a fresh virtual environment holding only the
  ``lib`` wheel and its dependencies.
* :data:`LAB` (numpy's baseline, no SIMD dispatch; OpenBLAS's Prescott kernels, one thread) is
  the machine of the JupyterLab walks (``tests/test_jupyterlab.py``): the server and its kernels
  run under it, each chapter's outputs after Run All are kept, and nbval compares them
  (``--outputs-from=<folder>``). Without Chromium there are no walks: the chapters then run under
  nbval in a child process of their own (:func:`start`), started right after collection.

Each chapter's result is read from its machine's JUnit report.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.nbharness import ROOT, chapter_paths

ARTIFACTS = ROOT / "tests" / "artifacts"
TIMEOUT = 600  # seconds, for one configuration


def numpy_targets() -> list[str]:
    """numpy's dispatch targets that this CPU supports, read from numpy itself."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]


def is_avx512(target: str) -> bool:
    return target.startswith("AVX512") or target == "X86_V4"


def configurations() -> dict[str, dict[str, str]]:
    """Name → environment of each emulated machine (only x86 has OpenBLAS kernels to force)."""
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    targets = numpy_targets()
    # one OpenBLAS thread each: the native run (the site's build) has the machine's count, so
    # a figure that depended on it would differ; and on a machine as busy as the suite keeps
    # it, OpenBLAS's threads spin waiting for each other (a 0.4 s cell took 12 s)
    no_avx512 = {"NPY_DISABLE_CPU_FEATURES": " ".join(t for t in targets if is_avx512(t)),
                 "OPENBLAS_NUM_THREADS": "1"}
    baseline = {"NPY_DISABLE_CPU_FEATURES": " ".join(targets), "OPENBLAS_NUM_THREADS": "1"}
    if x86:
        no_avx512["OPENBLAS_CORETYPE"] = "Haswell"
        baseline["OPENBLAS_CORETYPE"] = "Prescott"
    return {"numpy-without-avx512-openblas-haswell-1-thread": no_avx512,
            "numpy-baseline-openblas-prescott-1-thread": baseline}


CONFIGS = configurations()
#: The machine of the clean-environment run, and that of the JupyterLab walks.
CLEAN, LAB = CONFIGS
CHAPTERS = {p.stem: p for p in chapter_paths()}


def report(config: str) -> Path:
    """The JUnit report of the chapters' run on ``config``."""
    return ARTIFACTS / f"portability-{config}.xml"


def log(config: str) -> Path:
    return ARTIFACTS / f"portability-{config}.log"


def nbval_run(config: str, paths: list[str], *args: str, env: dict | None = None,
              timeout: float = TIMEOUT) -> None:
    """Run nbval (this suite's harness) on ``paths`` under ``config``, in a child process;
    its report: :func:`report`, its output: :func:`log`. Raises if no report was written."""
    finish(start_nbval(config, paths, *args, env=env), config, timeout)


def finish(proc: subprocess.Popen, config: str, timeout: float = TIMEOUT) -> None:
    """Wait for ``config``'s nbval process and its report (raises if either is missing)."""
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{config}: the chapters did not finish within {timeout:.0f} s "
                             f"(log: {log(config)})") from None
    check_report(config)


def start_nbval(config: str, paths: list[str], *args: str,
                env: dict | None = None) -> subprocess.Popen:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report(config).unlink(missing_ok=True)
    with log(config).open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider", "-n", "0",
             f"--junitxml={report(config)}", *args],
            cwd=ROOT, env={**os.environ, **CONFIGS[config], **(env or {})}, stdout=out,
            stderr=subprocess.STDOUT)


def check_report(config: str) -> None:
    if not report(config).exists():
        raise AssertionError(f"{config}: no report; the run broke (log: "
                             f"{log(config).relative_to(ROOT)}):\n{log(config).read_text()[-3000:]}")


_fallback: dict[str, subprocess.Popen] = {}


def start(chapters=None) -> None:
    """Without Chromium: start the chapters' run on :data:`LAB` (``chapters``: names; default
    all) in a child process of its own, once."""
    if not _fallback:
        _fallback[LAB] = start_nbval(LAB, [str(CHAPTERS[c].relative_to(ROOT))
                                           for c in (chapters or CHAPTERS)],
                                     "--outputs-from=kernel")


def stop() -> None:
    for proc in _fallback.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def wait_for_run(config: str) -> None:
    """Wait until the run that carries ``config`` has written its report."""
    from tests import test_clean_install, test_jupyterlab

    if config == CLEAN:
        test_clean_install.RUNS.wait()
    elif test_jupyterlab.WALKS.available():
        test_jupyterlab.WALKS.result(test_jupyterlab.OUTPUTS)
    else:
        start()
        finish(_fallback[LAB], config)
        return
    check_report(config)


def chapter_failures(path: Path, chapter: str) -> tuple[int, list[str]]:
    """How many of ``chapter``'s cells the report at ``path`` holds, and the failures among
    them (a case's class name ends in ``<chapter>.md`` or ``<chapter>.ipynb``)."""
    cases = [case for case in ET.parse(path).iter("testcase")  # classname "book.masks.md"
             if (case.get("classname") or "").rsplit(".", 2)[-2:-1] == [chapter]]
    failed = []
    for case in cases:
        for bad in list(case.iter("failure")) + list(case.iter("error")):
            failed.append(f"{case.get('name')}: {(bad.get('message') or '')[:300]}\n"
                          f"{(bad.text or '')[-1500:]}")
    return len(cases), failed


@pytest.mark.parametrize("chapter", list(CHAPTERS))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_chapters_print_the_same_figures_on_an_emulated_cpu(config, chapter):
    wait_for_run(config)
    cells, failed = chapter_failures(report(config), chapter)
    assert cells, f"{config}: {chapter} did not run (log: {log(config).relative_to(ROOT)})"
    assert not failed, (
        f"with {CONFIGS[config]}, {chapter}'s outputs differ from tests/reference/ "
        f"(full log: {log(config).relative_to(ROOT)}):\n" + "\n".join(failed[:5]))


@pytest.mark.parametrize("config", list(CONFIGS))
def test_an_emulated_cpu_really_switches_numpy_targets_off(config):
    """Under the configuration, numpy itself reports the disabled targets as unavailable."""
    disabled = CONFIGS[config]["NPY_DISABLE_CPU_FEATURES"].split()
    if not disabled:
        pytest.skip(f"{config}: this CPU has none of the targets it disables")
    probe = ("from numpy._core._multiarray_umath import __cpu_features__ as f; "
             "import sys; print(' '.join(t for t in sys.argv[1:] if f.get(t)))")
    env = {**os.environ, **CONFIGS[config]}
    still_on = subprocess.run([sys.executable, "-c", probe, *disabled], env=env,
                              capture_output=True, text=True, check=True).stdout.split()
    assert still_on == [], f"{config}: numpy still dispatches to {still_on}"
