"""How fast the book is on every path a reader or an author feels, against its targets.

Run from the repository root::

    .venv/bin/python benchmarks/run.py                  # everything, medians of 3+ runs (~7 min)
    .venv/bin/python benchmarks/run.py --quick          # smoke run: one run each, no test suite
    .venv/bin/python benchmarks/run.py --only seed,controls
    .venv/bin/python benchmarks/run.py --skip-tests     # everything but the (long) test suite

Sections (``--only`` takes a comma-separated list of them):

``words``     each chapter's core path and whole prose in words, and the core reading time,
              counted from the built page by ``tools/wordcount.py`` (budget 3,500 core words);
``seed``      the appendix simulation: the pure-Python reference and ``seed_report_fast`` timed
              alternately in this process, their ratio, and a check that they print the same text;
``controls``  every ``lib.widgets.Control`` a chapter binds to a name (run in this process),
              driven headlessly over its grid of parameter values: median of the live update
              (``Control.set`` + ``png()``, what the widget does on a change), with ``set``
              alone (recompute + Agg redraw);
``chapters``  each chapter top to bottom in a fresh kernel (nbclient), kernel start included;
``build``     in a throw-away copy of the project: a cold ``jupyter-book build`` (no execution
              cache), a rebuild with nothing changed, and a rebuild after a prose-only edit of
              one chapter (whose log must show no notebook executed); then each chapter page's
              weight (its HTML plus the images it references);
``lab``       the live controls in the project's JupyterLab, in Chromium (Playwright, as
              ``tests/test_jupyterlab.py`` drives it): each chapter opened and run, then every
              input of every control moved with the keyboard; median time from the key press
              to the new image on screen (kernel round trip, redraw and PNG included);
``site``      each chapter page of the built site (``_build/html``, built first if missing) loaded
              in headless Chromium (Playwright, Debian's ``chromium``) from a local server, a
              fresh browser context per load: the bytes it transfers with all its assets (HTML,
              CSS, JavaScript, MathJax and its fonts, images), and how long after the load event
              the math on the first screen is typeset;
``tests``     the whole test suite (ruff, then pytest), once;
``cost``      tiled against straightforward attention at N = 4096: peak-memory and time ratios.

It prints a table (value, target, pass/fail) and writes the same to ``benchmarks/results.json``,
each row with the date and the CPU it was measured on; the rows of sections a run leaves out
(``--only``) keep their last results. The real project files are never edited.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import http.server
import io
import itertools
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass
from html.parser import HTMLParser
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import matplotlib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
matplotlib.use("Agg")  # controls are measured headless
BIN = Path(sys.executable).parent
SECTIONS = ("words", "seed", "controls", "chapters", "build", "site", "lab", "tests", "cost")
#: What a copy of the project leaves out: environments, build output, caches.
COPY_IGNORE = shutil.ignore_patterns(".venv", "_build", ".git", "__pycache__", ".pytest_cache",
                                     "*.egg-info", ".ipynb_checkpoints")
BUILD_CMD = [str(BIN / "jupyter-book"), "build", ".", "--builder", "html", "-W", "-n",
             "--keep-going"]  # as `make html`
EXECUTED = re.compile(r"^(\S+): Executing notebook", re.M)  # myst-nb's log lines, per notebook
CACHED = re.compile(r"^(\S+): Using cached notebook", re.M)


@dataclass
class Row:
    section: str
    name: str
    value: float | None
    unit: str
    target: str = ""
    ok: bool | None = None  # None: no target, information only
    note: str = ""


def check(value, target: str) -> bool | None:
    """``value`` against a target written as ``"< 50"``, ``">= 10"`` or ``"== 0"``."""
    if not target or value is None:
        return None
    op, limit = target.split()
    limit = float(limit)
    return {"<": value < limit, "<=": value <= limit, ">=": value >= limit,
            "==": value == limit}[op]


def row(section, name, value, unit, target="", note="") -> Row:
    return Row(section, name, value, unit, f"{target} {unit}".strip() if target else "",
               check(value, target), note)


def machine() -> dict:
    import numpy

    cpu = platform.processor() or "unknown"
    with contextlib.suppress(OSError):
        models = re.findall(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        cpu = models[0].strip() if models else cpu
    versions = {}
    for dist in ("jupyter-book", "myst-nb", "sphinx"):
        with contextlib.suppress(PackageNotFoundError):
            versions[dist] = version(dist)
    return {"cpu": cpu, "cores": len(os.sched_getaffinity(0)), "os": platform.platform(),
            "python": platform.python_version(), "numpy": numpy.__version__,
            "matplotlib": matplotlib.__version__, **versions,
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


def chapters() -> list[Path]:
    from tests.nbharness import chapter_paths

    return list(chapter_paths())


# -- seed -------------------------------------------------------------------------------------
def bench_seed(quick: bool) -> list[Row]:
    """Reference and fast path alternately in this process, so both see the same load."""
    from lib.seedsim import seed_report_fast, seed_report_reference

    ref_runs, fast_per_ref = (1, 3) if quick else (3, 3)
    ref_t, fast_t, same = [], [], True
    for _ in range(ref_runs):
        t0 = time.perf_counter()
        ref = seed_report_reference(20000)
        ref_t.append(time.perf_counter() - t0)
        for _ in range(fast_per_ref):
            t0 = time.perf_counter()
            fast = seed_report_fast(20000)
            fast_t.append(time.perf_counter() - t0)
            same &= fast == ref
    ref_s, fast_s = statistics.median(ref_t), statistics.median(fast_t)
    note = f"medians of {len(ref_t)} and {len(fast_t)} runs"
    return [
        row("seed", "pure-Python reference, N = 20000", ref_s, "s", note=note),
        row("seed", "seed_report_fast, N = 20000", fast_s, "s", note=note),
        row("seed", "speed-up, reference / fast", ref_s / fast_s, "x", ">= 10"),
        row("seed", "same printed table, digit for digit", float(same), "bool", "== 1"),
    ]


# -- controls ---------------------------------------------------------------------------------
def run_cell(source: str, namespace: dict, name: str):
    """Execute a notebook cell's source in ``namespace``; return what it displays (or None).

    As in IPython: magics are translated, and a trailing expression is evaluated as the cell's
    result rather than discarded.
    """
    from IPython.core.inputtransformer2 import TransformerManager

    tree = ast.parse(TransformerManager().transform_cell(source), name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), namespace)  # the book's own chapter code
    return eval(compile(ast.Expression(last.value), name, "eval"), namespace) if last else None


def run_chapter_in_process(path: Path) -> dict:
    """Execute a chapter's code cells in a fresh namespace; return ``{name: Control}``.

    A control is found by the name the chapter binds it to; one that a cell shows without a
    name is listed as ``"cell N"``.
    """
    import matplotlib.pyplot as plt

    from lib.widgets import Control
    from tests.nbharness import code_cells, read_chapter

    namespace, shown = {"__name__": "__main__"}, {}
    cwd = os.getcwd()
    try:
        os.chdir(path.parent)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            for num, cell in enumerate(code_cells(read_chapter(path))):
                shown[f"cell {num}"] = run_cell(cell.source, namespace, f"{path.name}, cell {num}")
    finally:
        os.chdir(cwd)
    named = {name: obj for name, obj in namespace.items() if isinstance(obj, Control)}
    controls = named | {cell: obj for cell, obj in shown.items()
                        if isinstance(obj, Control) and obj not in named.values()}
    # Close the chapter's other figures; the controls' figures are measured next.
    keep = {id(control.fig) for control in controls.values()}
    for num in plt.get_fignums():
        if id(plt.figure(num)) not in keep:
            plt.close(num)
    return controls


def grid(control, cap: int) -> list[dict]:
    """The control's parameter states (the explorable face's grid), at most ``cap`` of them."""
    states = [dict(zip([p.name for p in control.params], combo, strict=True))
              for combo in itertools.product(*[p.values for p in control.params])]
    step = -(-len(states) // cap)
    return states[::step]


def steps(control) -> tuple:
    """Three callables on a dict of values: one state drawn, ``set`` alone, the recompute alone.

    One state drawn is what :meth:`lib.widgets.Control.packed` does for each state when the
    control is displayed: recompute, redraw, and read the canvas's pixels for the sprite.
    """
    from lib.widgets import _frame_pixels

    def live(values):
        control.set(draw=False, **values)
        _frame_pixels(control.fig)

    def redraw(values):
        control.set(**values)

    def recompute(values):
        control._update(control.artists, **control.values)

    return live, redraw, recompute


def bench_controls(quick: bool) -> list[Row]:
    """Per control, medians over its states of one state drawn, the Agg redraw, the recompute,
    and the time to draw and pack every state (what running the control's cell costs; both the
    site and the live face in Jupyter then show those frames, so moving an input draws nothing:
    see section ``lab`` for what a reader waits for in JupyterLab)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    rows = []
    for path in chapters():
        try:
            controls = run_chapter_in_process(path)
        except Exception as exc:  # a chapter mid-edit: say so, measure the others
            rows.append(row("controls", path.stem, None, "ms", "< 50",
                            f"chapter failed in process: {type(exc).__name__}: {exc}"[:160]))
            continue
        for name, control in controls.items():
            if not isinstance(control.fig.canvas, FigureCanvasAgg):  # e.g. closed in pyplot
                FigureCanvasAgg(control.fig)  # a base canvas's draw() does nothing
            states = grid(control, 8 if quick else 40)
            funcs = steps(control)
            funcs[0](states[0])  # warm-up: caches of fonts and text layout
            live, redraw, recompute = times = [], [], []
            for values in states:
                for func, series in zip(funcs, times, strict=True):
                    t0 = time.perf_counter()
                    func(values)
                    series.append(1e3 * (time.perf_counter() - t0))
            control._packed = None  # draw every state afresh, as displaying the control does
            t0 = time.perf_counter()
            control.explorable_html()  # every frame, packed, and the no-kernel face
            explorable = time.perf_counter() - t0
            frames = len(list(itertools.product(*[p.values for p in control.params])))
            params = ", ".join(p.name for p in control.params)
            med = statistics.median
            rows.append(row(
                "controls", f"{path.stem}: {name} ({params}), one state drawn", med(live), "ms",
                "< 50", f"max {max(live):.0f} ms over {len(states)} states; set (recompute + "
                f"Agg redraw) {med(redraw):.0f} ms, recompute alone {med(recompute):.1f} ms; "
                f"every state drawn and packed {explorable:.1f} s for {frames} frames"))
    return rows


# -- chapters ---------------------------------------------------------------------------------
def cell_seconds(nb) -> list[tuple[int, float]]:
    """(code cell number, seconds) from nbclient's timing records, slowest first."""
    from datetime import datetime

    out = []
    code = [c for c in nb.cells if c.cell_type == "code"]
    for num, cell in enumerate(code):
        ex = cell.metadata.get("execution", {})
        if "iopub.execute_input" in ex and "shell.execute_reply" in ex:
            t0, t1 = (datetime.fromisoformat(ex[k].replace("Z", "+00:00"))
                      for k in ("iopub.execute_input", "shell.execute_reply"))
            out.append((num, (t1 - t0).total_seconds()))
    return sorted(out, key=lambda pair: -pair[1])


def bench_chapters(quick: bool) -> list[Row]:
    """Each chapter in a fresh kernel (nbclient, cwd = its folder), kernel start included."""
    from nbclient import NotebookClient

    from tests.nbharness import read_chapter

    rows = []
    for path in chapters():
        times, cells = [], []
        try:
            for _ in range(1 if quick else 3):
                nb = read_chapter(path)
                t0 = time.perf_counter()
                NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=True,
                               resources={"metadata": {"path": str(path.parent)}},
                               ).execute(stderr=subprocess.DEVNULL)  # the kernel's TCP notice
                times.append(time.perf_counter() - t0)
                cells = cell_seconds(nb)
        except Exception as exc:
            rows.append(row("chapters", path.stem, None, "s", "< 10",
                            f"failed: {type(exc).__name__}: {exc}"[:160]))
            continue
        in_cells = sum(seconds for _, seconds in cells)
        slowest = ", ".join(f"#{num} {seconds:.1f}" for num, seconds in cells[:3])
        rows.append(row("chapters", path.stem, statistics.median(times), "s", "< 10",
                        f"median of {len(times)}; last run: cells {in_cells:.1f} s (slowest: "
                        f"{slowest} s), kernel start and overhead {times[-1] - in_cells:.1f} s"))
    return rows


# -- build and page weight --------------------------------------------------------------------
def build(project: Path) -> tuple[float, str, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(BUILD_CMD, cwd=project, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    return seconds, proc.stdout + proc.stderr, proc.returncode


def prose_edit(path: Path) -> None:
    """Append a paragraph of prose: the code cells, which key the execution cache, are unchanged."""
    path.write_text(path.read_text().rstrip("\n") + "\n\nAn edit of the prose only.\n")


class Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sources = []

    def handle_starttag(self, tag, attrs):
        src = dict(attrs).get("src")
        if tag == "img" and src and not src.startswith(("data:", "http:", "https:")):
            self.sources.append(src)


def page_weight(page: Path) -> tuple[int, int]:
    """Bytes of a built page and of the distinct local images it references."""
    parser = Images()
    parser.feed(page.read_text(encoding="utf-8"))
    images = {(page.parent / src.split("#")[0].split("?")[0]).resolve()
              for src in parser.sources}
    return page.stat().st_size, sum(p.stat().st_size for p in images if p.is_file())


def bench_build(quick: bool) -> list[Row]:
    cold, nochange, edited, executed_after_edit, statuses = [], [], [], [], set()
    executed_cold = cached_after_edit = 0
    chapter = chapters()[0].relative_to(ROOT)
    with tempfile.TemporaryDirectory(prefix="book-bench-") as tmp:
        for run in range(1 if quick else 3):
            project = Path(tmp) / f"run{run}"
            shutil.copytree(ROOT, project, ignore=COPY_IGNORE)
            for times in (cold, nochange):
                seconds, log, code = build(project)
                times.append(seconds)
                statuses.add(code)
                if times is cold:
                    executed_cold = len(EXECUTED.findall(log))
            prose_edit(project / chapter)
            seconds, log, code = build(project)
            edited.append(seconds)
            statuses.add(code)
            executed_after_edit.append(len(EXECUTED.findall(log)))
            cached_after_edit = len(CACHED.findall(log))
        weights = [(path.stem, *page_weight(project / "_build" / "html" / path.relative_to(ROOT)
                                            .with_suffix(".html")))
                   for path in chapters()]
        static = sum(p.stat().st_size for p in (project / "_build/html/_static").rglob("*")
                     if p.is_file())
    status = ("all builds exited 0" if statuses == {0}
              else f"exit codes {sorted(statuses)} (-W: warnings are errors; times still valid)")
    runs = f"median of {len(cold)}; {status}"
    rows = [
        row("build", "cold build, no execution cache", statistics.median(cold), "s", "< 60",
            f"{runs}; {executed_cold} notebooks executed"),
        row("build", "rebuild, nothing changed", statistics.median(nochange), "s", "< 10", runs),
        row("build", f"rebuild after a prose-only edit of {chapter.name}",
            statistics.median(edited), "s", "< 10", runs),
        row("build", "notebooks re-executed after the prose-only edit",
            float(max(executed_after_edit)), "count", "== 0",
            f"myst-nb's log: 'Executing notebook' lines; the edited chapter was re-read and "
            f"served from the cache ({cached_after_edit} 'Using cached notebook')"),
    ]
    for stem, html, images in weights:
        rows.append(row("page weight", f"{stem}.html + images", (html + images) / 1e6, "MB",
                        "< 3", f"HTML {html / 1e6:.2f} MB (controls' frames inline), "
                        f"images {images / 1e6:.2f} MB"))
    rows.append(row("page weight", "shared theme and static assets (cached once per site)",
                    static / 1e6, "MB", note="_static: CSS, JS, fonts, MathJax"))
    return rows


# -- lab --------------------------------------------------------------------------------------
def bench_lab(quick: bool) -> list[Row]:
    """Input-to-image latency of every live control input in JupyterLab, in a real browser."""
    from tests.test_jupyterlab import CHROMIUM, lab_latencies

    if CHROMIUM is None:
        return [row("lab", "controls in JupyterLab", None, "ms", "< 50",
                    "needs Debian's chromium (apt-get install -y chromium)")]
    rows = []
    for name, result in lab_latencies(presses=3 if quick else 9).items():
        ok = sorted(t for t in result["all"] if t is not None)
        note = (f"{len(ok)} key presses, {ok[0]:.0f}-{ok[-1]:.0f} ms" if ok
                else "the image never changed")
        if len(ok) < len(result["all"]):
            note += f"; {len(result['all']) - len(ok)} presses without a new image"
        line = row("lab", f"input to image: {name}", result["median"], "ms", "< 50", note)
        line.ok = line.ok if ok else False  # an input that never redraws fails
        rows.append(line)
    return rows


# -- the site in a browser: page weight and time to typeset ----------------------------------
def load_page(browser, url: str) -> tuple[int, float]:
    """Bytes transferred by one load of ``url`` (every response body, until the network is
    idle) and milliseconds from the load event to the first screen's math typeset."""
    from tests.test_browser import FIRST_SCREEN

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sizes = []
    page.on("response", lambda r: sizes.append(r) if not r.url.startswith("data:") else None)
    page.goto(url, wait_until="load")
    typeset = page.evaluate(FIRST_SCREEN)["ms"]
    page.wait_for_load_state("networkidle")
    total = sum(len(r.body()) for r in sizes if r.ok)
    context.close()
    return total, typeset


def bench_site(quick: bool) -> list[Row]:
    from playwright.sync_api import sync_playwright

    from tests.test_browser import CHROMIUM, Quiet

    site = ROOT / "_build" / "html"
    if not (site / "index.html").exists():
        build(ROOT)
    handler = functools.partial(Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    rows = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM)
            for path in chapters():
                url = f"{origin}/{path.relative_to(ROOT).with_suffix('.html')}"
                loads = [load_page(browser, url) for _ in range(1 if quick else 3)]
                weight = max(b for b, _ in loads)
                page = (site / path.relative_to(ROOT).with_suffix(".html")).read_text()
                frames = sum(len(m) for m in re.findall(r"data:image/\w+;base64,[\w+/=]+", page))
                rows.append(row("site", f"{path.stem}: page weight, all assets", weight / 1e6,
                                "MB", "< 2.5", f"every response of one uncached load; "
                                f"{weight / 1e3:,.0f} KB, of which {frames / 1e3:,.0f} KB "
                                "inline images (the controls' sprites)"))
                rows.append(row("site", f"{path.stem}: first screen's math typeset",
                                statistics.median(t for _, t in loads) / 1000, "s", "< 1",
                                f"after the load event; median of {len(loads)} loads"))
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    return rows


# -- words ------------------------------------------------------------------------------------
def bench_words(quick: bool) -> list[Row]:
    """Each chapter's visible path (what the page shows unfolded: prose, visible code as
    identifiers and numbers, visible outputs) in minutes, and its core prose in words, from the
    built page."""
    sys.path.insert(0, str(ROOT / "tools"))
    import wordcount

    site = ROOT / "_build" / "html"
    if not (site / "index.html").exists():
        build(ROOT)
    rows = []
    for path in chapters():
        page = site / path.relative_to(ROOT).with_suffix(".html")
        html = page.read_text(encoding="utf-8")
        count, seen = wordcount.count_html(html), wordcount.count_visible(html)
        rows.append(row("words", f"{path.stem}: visible path", round(seen.minutes, 1), "min",
                        f"<= {wordcount.VISIBLE_BUDGET_MINUTES}",
                        f"{seen.prose:,} prose + {seen.code:,} code + {seen.output:,} output "
                        f"words at {wordcount.WORDS_PER_MINUTE} words/min"))
        rows.append(row("words", f"{path.stem}: core path", count.core, "words",
                        f"<= {wordcount.CORE_BUDGET}",
                        f"{count.total:,} words in all; core path about {count.minutes:.0f} min "
                        f"at {wordcount.WORDS_PER_MINUTE} words/min"))
    return rows


# -- tests ------------------------------------------------------------------------------------
def bench_tests(quick: bool) -> list[Row]:
    """``make test`` without make: ruff, then pytest (which also builds the site strictly)."""
    commands = [[sys.executable, "-m", "ruff", "check", "lib", "tests", "benchmarks", "tools"],
                [sys.executable, "-m", "pytest", "-q"]]
    t0 = time.perf_counter()
    procs = [subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True) for cmd in commands]
    seconds = time.perf_counter() - t0
    summary = (procs[1].stdout.strip().splitlines() or ["no output"])[-1].strip("= ")
    note = f"ruff exit {procs[0].returncode}; pytest: {summary}"
    return [row("tests", "whole suite (ruff + pytest), one run", seconds, "s", "< 180", note)]


# -- cost -------------------------------------------------------------------------------------
def bench_cost(quick: bool) -> list[Row]:
    """Tiled against straightforward attention at N = 4096 (one head, d = 64, float32, blocks
    of 128, one BLAS thread): peak memory by tracemalloc, and best times, alternated."""
    import numpy as np

    from lib.cost import attention, attention_bytes, tiled_attention
    from lib.measure import best_time, peak_bytes

    n, d, block = 4096, 64, 128
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))
    mem_s, mem_t = peak_bytes(attention, Q, K, V), peak_bytes(tiled_attention, Q, K, V,
                                                               block, block)
    t_s, t_t = [], []
    for _ in range(1 if quick else 3):
        t_s.append(best_time(attention, Q, K, V, repeat=3))
        t_t.append(best_time(tiled_attention, Q, K, V, block, block, repeat=1))
    ts, tt = min(t_s), min(t_t)
    counts = (attention_bytes(n, n, d, d), attention_bytes(n, n, d, d, block_q=block,
                                                           block_k=block))
    setting = f"N = {n}, d = {d}, float32, blocks of {block}, one BLAS thread"
    return [
        row("cost", "peak memory, straightforward / tiled", mem_s / mem_t, "x", note=(
            f"{setting}; tracemalloc {mem_s / 1e6:.1f} MB and {mem_t / 1e6:.2f} MB, counted "
            f"{counts[0] / 1e6:.1f} MB and {counts[1] / 1e6:.2f} MB")),
        row("cost", "time, tiled / straightforward (numpy, no fused kernel)", tt / ts, "x",
            note=f"{setting}; best {1e3 * ts:.0f} ms and {1e3 * tt:.0f} ms"),
    ]


# -- report -----------------------------------------------------------------------------------
def fmt(value, unit) -> str:
    if value is None:
        return "-"
    if unit == "bool":
        return "yes" if value else "no"
    if unit == "count":
        return f"{value:.0f}"
    if unit == "x":
        return f"{value:.1f}x"
    return f"{value:.2f} {unit}" if unit == "s" else f"{value:.1f} {unit}"


def print_table(rows: list[Row], info: dict) -> None:
    print(f"\nMachine: {info['cpu']}, {info['cores']} cores, {info['os']}")
    print(f"Python {info['python']}, numpy {info['numpy']}, matplotlib {info['matplotlib']}, "
          f"jupyter-book {info.get('jupyter-book', '?')}; "
          f"load average at start {info['load_average_at_start']}\n")
    table = [("section", "measurement", "value", "target", "", "note")]
    for r in rows:
        verdict = {True: "PASS", False: "FAIL", None: ""}[r.ok]
        table.append((r.section, r.name, fmt(r.value, r.unit),
                      r.target.replace(" bool", "").replace(" count", ""), verdict, r.note))
    widths = [max(len(line[i]) for line in table) for i in range(5)]
    for line in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(line[:5], widths, strict=True)),
              line[5])
    failed = [r for r in rows if r.ok is False]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} lines without failure; "
          f"{len(failed)} failed.")


def write_results(path: Path, rows: list[Row], sections: list[str], info: dict,
                  mode: str) -> None:
    """Write this run's rows to ``path``, keeping the rows of sections it did not run (a run
    of one section leaves the others' last results); each row says when and where it was
    measured."""
    date = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    kept = []
    if path.exists():
        old = json.loads(path.read_text())
        kept = [{"date": old.get("date"), "mode": old.get("mode"),
                 "cpu": old.get("machine", {}).get("cpu"), **r}
                for r in old.get("results", []) if r["section"] not in sections]
    new = [{"date": date, "mode": mode, "cpu": info["cpu"], **asdict(r)} for r in rows]
    order = {name: i for i, name in enumerate(SECTIONS)}
    results = sorted(kept + new, key=lambda r: order.get(r["section"], len(order)))
    path.write_text(json.dumps(
        {"date": date, "mode": mode, "sections": sorted({r["section"] for r in results},
                                                        key=lambda n: order.get(n, len(order))),
         "machine": info, "results": results}, indent=2) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one run each, fewer control states, no test suite")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"comma-separated sections among {', '.join(SECTIONS)}")
    parser.add_argument("--skip-tests", action="store_true", help="leave out the test suite")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results.json",
                        help="where to write the results (default: benchmarks/results.json)")
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose among {SECTIONS}")
    if args.quick or args.skip_tests:
        sections = [s for s in sections if s != "tests"]

    info = machine()
    rows: list[Row] = []
    benches = {"words": bench_words, "seed": bench_seed, "controls": bench_controls,
               "chapters": bench_chapters,
               "build": bench_build, "site": bench_site, "lab": bench_lab,
               "tests": bench_tests, "cost": bench_cost}
    for section in sections:
        print(f"[{time.strftime('%H:%M:%S')}] {section} ...", flush=True)
        rows += benches[section](args.quick)
    print_table(rows, info)
    write_results(args.json, rows, sections, info, "quick" if args.quick else "full")
    print(f"Results written to {args.json}")
    return 1 if any(r.ok is False for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
