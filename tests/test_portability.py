"""The chapters print the same figures on other processors.

numpy picks its SIMD kernels (AVX-512, AVX2, ...) and OpenBLAS its matrix kernels by the CPU
it runs on, and the two change results in the last bits. Both can be cut down on this machine:
``NPY_DISABLE_CPU_FEATURES`` switches off numpy's dispatch targets and ``OPENBLAS_CORETYPE``
forces an OpenBLAS kernel; the chapters' kernels inherit both. Each test below re-executes every
chapter under nbval in such an emulated machine, against the same committed references as the
main run, so a figure that depends on the processor fails here.

The configurations run side by side in child processes, one per configuration for all the
chapters selected (``make check CHAPTER=masks``: that one), started as soon as pytest has
collected these tests (``pytest_collection_finish`` in ``tests/conftest.py``), so they overlap
the rest of the suite. Each chapter's result is read from its configuration's JUnit report.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
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
    no_avx512 = {"NPY_DISABLE_CPU_FEATURES": " ".join(t for t in targets if is_avx512(t))}
    baseline = {"NPY_DISABLE_CPU_FEATURES": " ".join(targets), "OPENBLAS_NUM_THREADS": "1"}
    if x86:
        no_avx512["OPENBLAS_CORETYPE"] = "Haswell"
        baseline["OPENBLAS_CORETYPE"] = "Prescott"
    return {"numpy-without-avx512-openblas-haswell": no_avx512,
            "numpy-baseline-openblas-prescott-1-thread": baseline}


CONFIGS = configurations()
CHAPTERS = {p.stem: p for p in chapter_paths()}
_runs: dict[str, tuple[subprocess.Popen, Path, Path]] = {}


def start(chapters=None) -> None:
    """Start every configuration's run of ``chapters`` (names; default: all) once, so that
    they run side by side."""
    if _runs:
        return
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    paths = [str(CHAPTERS[c].relative_to(ROOT)) for c in (chapters or CHAPTERS)]
    for config, env_vars in CONFIGS.items():
        log = ARTIFACTS / f"portability-{config}.log"
        report = ARTIFACTS / f"portability-{config}.xml"
        report.unlink(missing_ok=True)
        env = {**os.environ, **env_vars}
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider", "-n", "0",
                 f"--junitxml={report}"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            )
        _runs[config] = proc, log, report


def stop() -> None:
    for proc, _, _ in _runs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def chapter_failures(report: Path, chapter: str) -> tuple[int, list[str]]:
    """How many of ``chapter``'s cells the report holds, and the failures among them."""
    cases = [case for case in ET.parse(report).iter("testcase")  # classname "book.masks.md"
             if case.get("classname") == f"book.{chapter}.md"]
    failed = []
    for case in cases:
        for bad in list(case.iter("failure")) + list(case.iter("error")):
            failed.append(f"{case.get('name')}: {(bad.get('message') or '')[:300]}\n"
                          f"{(bad.text or '')[-1500:]}")
    return len(cases), failed


@pytest.mark.parametrize("chapter", list(CHAPTERS))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_chapters_print_the_same_figures_on_an_emulated_cpu(config, chapter):
    start()
    proc, log, report = _runs[config]
    deadline = time.monotonic() + TIMEOUT
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    if proc.poll() is None:
        proc.kill()
        pytest.fail(f"{config}: the chapters did not finish within {TIMEOUT} s (log: {log})")
    assert report.exists(), (f"{config}: no report; the run broke (log: "
                             f"{log.relative_to(ROOT)}):\n{log.read_text()[-3000:]}")
    cells, failed = chapter_failures(report, chapter)
    assert cells, f"{config}: {chapter} did not run (log: {log.relative_to(ROOT)})"
    assert not failed, (
        f"with {CONFIGS[config]}, {chapter}'s outputs differ from tests/reference/ "
        f"(full log: {log.relative_to(ROOT)}):\n" + "\n".join(failed[:5]))


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
