"""The chapters in the project's JupyterLab, driven in a real browser.

This is what a local learner (``.venv/bin/jupyter lab``) and a Binder user get. The module
runs ``postBuild`` (what Binder runs) into a private Jupyter config folder, starts one
``jupyter lab`` on 127.0.0.1 with a random free port and a token for all the tests, and:

* through the REST API: Markdown opens with jupytext's notebook viewer; the jupytext,
  jupyterlab-myst, widgets and anywidget extensions are enabled and none is reported
  incompatible; each chapter opens as a notebook through the contents API, and saving that
  notebook back through the API leaves the file byte for byte as it was;
* the chapters' files are what ``tools/lab_compat.py`` writes (the jupytext round-trip fixed
  point, citations and figure references jupyterlab-myst can read, solutions collapsed);
* in Debian's Chromium (Playwright), each chapter as a learner meets it: opened (every cell
  rendered), Run All, every live control moved with the keyboard, saved
  (``test_chapter_in_jupyterlab``). The walks run in a thread of their own, with their own
  JupyterLab and browser, from the end of collection on (:data:`WALKS`), since they mostly
  wait; each test waits for its chapter's. That JupyterLab and its kernels run on an emulated
  processor, and what each chapter printed after Run All is kept and compared with the
  references by nbval: the run of :data:`tests.test_portability.LAB`.

``lab_latencies`` times each control's inputs for ``make bench`` (section ``lab``).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import nbformat
import pytest
import requests

from tests import shots, test_portability, timeouts
from tests.background import Background
from tests.nbharness import ROOT, chapter_paths, read_chapter, reference_path

ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = shutil.which("chromium")
START_TIMEOUT = 60
VENV_BIN = Path(sys.executable).parent

# MyST that jupyterlab-myst did not turn into text: a role, a directive fence or option,
# a target. Looked for in the rendered Markdown only (not in the hidden editors).
RAW_MYST = re.compile(r"\{[a-z][\w:-]*\}`|```|^:[a-z-]+:|^\([\w-]+\)=$", re.M)
NOT_FOUND = ("Cross Reference Not Found", "Citation Not Found")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterLab:
    """The project's ``jupyter lab``, configured by ``postBuild`` in a private folder."""

    def __init__(self, folder: Path, root: Path = ROOT, env: dict | None = None):
        self.folder, self.root = folder, root
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, **(env or {}), JUPYTER_CONFIG_DIR=str(folder / "config"),
                        JUPYTER_RUNTIME_DIR=str(folder / "runtime"),
                        JUPYTER_DATA_DIR=str(folder / "data"),
                        PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        subprocess.run(["bash", str(root / "postBuild")], env=self.env, cwd=root, check=True,
                       timeout=60)
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"token {self.token}"
        self.log = open(folder / "lab.log", "w")
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "jupyter-lab"), "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={root}",
             f"--LabApp.user_settings_dir={folder / 'user-settings'}",
             f"--LabApp.workspaces_dir={folder / 'workspaces'}",
             # window.jupyterapp, to run JupyterLab's own commands (Run All, Save)
             "--LabApp.expose_app_in_browser=True"]
            + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
            env=self.env, cwd=root, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                self.get("/api/status")
                return
            except requests.ConnectionError as err:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("jupyter lab did not start:\n"
                                       + (folder / "lab.log").read_text()[-3000:]) from err
                time.sleep(0.3)

    def get(self, path: str, **params):
        resp = self.session.get(self.base + path, params=params,
                                timeout=timeouts.seconds(timeouts.HTTP))
        resp.raise_for_status()
        return resp

    def contents(self, path: str) -> dict:
        """The contents API's model of ``path`` (relative to the repository), as a notebook."""
        return self.get("/api/contents/" + urllib.parse.quote(path), type="notebook",
                        content=1).json()

    def save(self, path: str, model: dict) -> None:
        resp = self.session.put(self.base + "/api/contents/" + urllib.parse.quote(path),
                                json={"type": "notebook", "format": "json",
                                      "content": model["content"]},
                                timeout=timeouts.seconds(timeouts.HTTP))
        resp.raise_for_status()

    def end_sessions(self) -> None:
        """Shut down every session's kernel (a chapter's kernel holds its memory)."""
        for session in self.get("/api/sessions").json():
            self.session.delete(f"{self.base}/api/sessions/{session['id']}",
                                timeout=timeouts.seconds(timeouts.HTTP))

    def file(self, chapter: Path) -> Path:
        """The copy of ``chapter`` (a path in the repository) this JupyterLab serves."""
        return self.root / chapter.relative_to(ROOT)

    def url(self, path: str) -> str:
        return f"{self.base}/lab/tree/{urllib.parse.quote(path)}?reset&token={self.token}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


#: What JupyterLab reads of the project: the chapters and their assets, the bibliography,
#: jupytext's settings and the book's configuration. (``lib`` is installed: a chapter's
#: kernel imports the checkout's.)
LAB_FILES = ("book", "references.bib", "jupytext.toml", "pyproject.toml", "postBuild",
             "_config.yml", "_toc.yml")


@contextlib.contextmanager
def running_lab(env: dict | None = None):
    """A JupyterLab serving a private copy of the project's files (:data:`LAB_FILES`): what
    a learner's saves write goes there, so the chapters on disk, which the rest of the suite
    reads meanwhile, are never rewritten (Jupyter's save truncates a file, then writes it).
    ``env``: variables for the server and its kernels (an emulated processor's)."""
    with tempfile.TemporaryDirectory(prefix="jupyterlab-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        for name in LAB_FILES:
            if (ROOT / name).is_dir():
                shutil.copytree(ROOT / name, root / name)
            else:
                shutil.copy2(ROOT / name, root / name)
        lab = JupyterLab(Path(tmp), root, env)
        try:
            yield lab
        finally:
            lab.stop()


@pytest.fixture(scope="module")
def lab():
    with running_lab() as server:
        yield server


@contextlib.contextmanager
def unchanged(path: Path):
    """Restore ``path`` (a chapter's copy in a JupyterLab's folder) afterwards, whatever a
    test did to it, with its modification time; yields its original bytes."""
    before, stat = path.read_bytes(), path.stat()
    try:
        yield before
    finally:
        if path.read_bytes() != before:
            path.write_bytes(before)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def rel(chapter: Path) -> str:
    """``chapter``'s path in the repository, and in a JupyterLab's copy of it."""
    return str(chapter.relative_to(ROOT))


# -- the chapters' source ---------------------------------------------------------------------
def test_chapters_are_lab_compatible():
    """Header, jupytext formatting, hidden solutions, figure references and citations as
    ``tools/lab_compat.py`` writes them (run it after editing a chapter)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import lab_compat

    pages = [*chapter_paths(), ROOT / "book" / "intro.md"]
    assert lab_compat.main(["--check", *map(str, pages)]) == 0, (
        "run `.venv/bin/python tools/lab_compat.py book/*.md` and commit the result")


def test_citation_links_read_back_as_the_roles():
    sys.path.insert(0, str(ROOT / "tools"))
    sys.path.insert(0, str(ROOT / "tools" / "sphinx_ext"))
    import lab_citations
    import lab_compat

    text = ("as {cite:t}`vaswani2017attention` showed {cite:p}`ba2016layer`, see also "
            "{cite:p}`johnson1984extensions,vershynin2018high`.")
    links = lab_compat.rewrite_citations(text, ROOT / "book" / "x.md")
    assert "{cite" not in links and "[Vaswani et al. (2017)](../references.bib#" in links
    assert lab_citations.to_roles(links) == text


# -- the server, through its REST API ---------------------------------------------------------
def test_postbuild_makes_markdown_open_as_a_notebook(lab):
    settings = lab.get("/lab/api/settings/@jupyterlab/docmanager-extension:plugin").json()
    viewers = settings["schema"]["properties"]["defaultViewers"]["default"]
    assert viewers.get("markdown") == "Jupytext Notebook", viewers
    assert viewers.get("myst") == "Jupytext Notebook", viewers


def test_extensions_enabled_and_compatible(lab):
    page = lab.get("/lab").text
    for ext in ("jupyterlab-jupytext", "jupyterlab-myst", "@jupyter-widgets/jupyterlab-manager",
                "anywidget"):
        assert f'"name": "{ext}"' in page or f'"name":"{ext}"' in page, (
            f"the {ext} JupyterLab extension is not installed or not enabled")
    listing = subprocess.run([str(VENV_BIN / "jupyter"), "labextension", "list"], env=lab.env,
                             capture_output=True, text=True, check=True)
    report = listing.stdout + listing.stderr
    assert "not compatible" not in report and "Conflicting Dependencies" not in report, report


@pytest.mark.parametrize("chapter", chapter_paths(), ids=lambda p: p.stem)
def test_contents_api_round_trip_keeps_the_file(lab, chapter):
    before = chapter.read_bytes()
    with unchanged(lab.file(chapter)):
        model = lab.contents(rel(chapter))
        assert model["type"] == "notebook", f"{chapter.name} opened as {model['type']}"
        nb = model["content"]
        expected = [c.source for c in read_chapter(chapter).cells if c.cell_type == "code"]
        got = [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]
        assert got == expected, "the server's notebook has other code cells than the chapter"
        lab.save(rel(chapter), model)
        after = lab.file(chapter).read_bytes()
    assert after == before, (
        f"saving the unedited {chapter.name} through the contents API rewrote it; run "
        f"`.venv/bin/python tools/lab_compat.py {rel(chapter)}` and commit the result")


# -- the chapters in the browser --------------------------------------------------------------
# The open notebook's parts, in JupyterLab 4 and jupyterlab-myst 2.
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
JS_STATE = """() => {
  const nb = document.querySelector('NOTEBOOK');
  if (!nb) return null;
  const md = Array.from(nb.querySelectorAll('.jp-MarkdownCell'));
  const code = Array.from(nb.querySelectorAll('.jp-CodeCell'));
  return {
    markdown: md.length,
    rendered: md.filter(c => (c.querySelector('.myst') || {}).innerText).length,
    unrendered: md.map((c, i) => (c.querySelector('.myst') || {}).innerText ? -1 : i)
      .filter(i => i >= 0).slice(0, 5),
    code: code.length,
    collapsed: code.filter(c => c.querySelector('.jp-InputPlaceholder')).length,
    // collapsed cells (solutions) whose output shows text beyond a closed <details>' summary
    solutionsShown: code.filter(c => c.querySelector('.jp-InputPlaceholder')).filter(c => {
      const area = c.querySelector('.jp-Cell-outputArea');
      if (!area || c.querySelector('.jp-OutputPlaceholder')) return false;
      let text = area.innerText;
      area.querySelectorAll('details:not([open]) > summary').forEach(s => {
        text = text.replace(s.innerText, '');
      });
      // a check cell (tagged check) is folded too, and shows its one 'Checked:' line
      return text.trim().length > 0 && !/^Checked: [^\\n]*$/.test(text.trim());
    }).length,
    notFound: Array.from(nb.querySelectorAll('[title]')).map(e => e.title + ': ' + e.innerText)
      .filter(t => /Not Found/.test(t)),
    // the rendered prose without its math (KaTeX's text of p(T) = ... is no MyST syntax)
    text: md.map(c => {
      const myst = c.querySelector('.myst');
      if (!myst) return '';
      let text = myst.innerText || '';
      myst.querySelectorAll('.katex, mjx-container').forEach(m => {
        if (m.innerText) text = text.replace(m.innerText, ' ');
      });
      return text;
    }).join('\\n\\n'),
    errors: Array.from(nb.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"],' +
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]'))
      .map(e => e.innerText.slice(0, 300)),
  };
}""".replace("NOTEBOOK", NOTEBOOK)
# How far the open notebook's Markdown has rendered, cheaply: polled while a chapter opens,
# so it reads textContent (no layout), where JS_STATE's innerText lays the notebook out.
JS_RENDERED = """() => {
  const nb = document.querySelector('NOTEBOOK');
  if (!nb) return null;
  const md = Array.from(nb.querySelectorAll('.jp-MarkdownCell'));
  const done = md.map(c => !!(c.querySelector('.myst') || {}).textContent);
  return {markdown: md.length, rendered: done.filter(Boolean).length,
          unrendered: done.map((d, i) => d ? -1 : i).filter(i => i >= 0).slice(0, 5)};
}""".replace("NOTEBOOK", NOTEBOOK)


@contextlib.contextmanager
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        try:
            yield chromium
        finally:
            chromium.close()


def open_chapter(chromium, lab: JupyterLab, chapter: Path, timeout: float | None = None,
                 watch=None, page=None):
    """A page with ``chapter`` open in JupyterLab and every Markdown cell rendered
    (``watch(page)`` is called before it loads, to attach listeners). Given ``page``, a page
    where JupyterLab is loaded and no document is open, the chapter is opened there with
    JupyterLab's own Open command, as a learner opens the next chapter: JupyterLab is not
    loaded again."""
    timeout = timeouts.seconds(timeouts.LAB_OPEN) if timeout is None else timeout
    if page is None:
        # reduced motion: JupyterLab's busy indicators need not animate while cells run
        page = chromium.new_page(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
        page.set_default_timeout(timeouts.ms(timeouts.PAGE_ACTION))
        if watch:
            watch(page)
        page.goto(lab.url(rel(chapter)))
    else:
        page.evaluate("(path) => { window.jupyterapp.commands.execute('docmanager:open', "
                      "{path}); }", rel(chapter))
    page.wait_for_selector(NOTEBOOK + " .jp-Cell", timeout=timeout * 1000)
    nb = read_chapter(chapter)
    n_md = sum(c.cell_type == "markdown" for c in nb.cells)
    # wait on progress, not on a clock: fail only when nothing more has rendered for
    # ``timeout`` seconds (a busy machine renders slowly; a broken cell never renders)
    last, deadline = None, time.monotonic() + timeout
    while True:
        state = page.evaluate(JS_RENDERED)
        if state and state["markdown"] == state["rendered"] == n_md:
            break
        progress = state and (state["markdown"], state["rendered"])
        if progress != last:
            last, deadline = progress, time.monotonic() + timeout
        if time.monotonic() > deadline:
            md = [c.source for c in nb.cells if c.cell_type == "markdown"]
            stuck = [f"Markdown cell {i + 1}: {md[i][:80]!r}"
                     for i in (state or {}).get("unrendered", []) if i < len(md)]
            raise AssertionError(
                f"{chapter.name}: {state and state['rendered']} of {n_md} Markdown cells "
                f"rendered, and none more in {timeout:.0f} s; not rendered: {stuck}")
        page.wait_for_timeout(250)
    # the kernel is up and idle (waits here poll every 100 ms: Playwright's default, every
    # animation frame, keeps the renderer drawing frames for as long as it waits)
    page.wait_for_function(
        "() => window.jupyterapp && document.querySelector("
        "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator"
        "[data-status=\"idle\"]')", timeout=timeout * 1000, polling=100)
    return page


def scroll_through(page, name: str | None = None) -> None:
    """Scroll the notebook from top to bottom, a screen at a time (screenshots of the first
    and last screens as ``<name>-top.png``/``-bottom.png``)."""
    scroller = NOTEBOOK.replace(" .jp-Notebook", " .jp-WindowedPanel-outer")
    page.evaluate(f"() => document.querySelector('{scroller}').scrollTo(0, 0)")
    if name:
        page.screenshot(path=str(ARTIFACTS / f"{name}-top.png"))
    page.evaluate(f"""async () => {{  // a screen at a time, each one painted
        const s = document.querySelector('{scroller}');
        const painted = () => new Promise(
            r => requestAnimationFrame(() => requestAnimationFrame(r)));
        for (let i = 0; i < 2000; i++) {{
            s.scrollBy(0, s.clientHeight * 0.9);
            await painted();
            if (s.scrollTop + s.clientHeight >= s.scrollHeight - 2) break;
        }}
    }}""")
    page.wait_for_timeout(300)
    if name:  # the last cell at the bottom of the screen, not the notebook's empty margin
        page.evaluate(f"() => Array.from(document.querySelectorAll('{NOTEBOOK} .jp-Cell'))"
                      ".pop().scrollIntoView({block: 'end'})")
        page.wait_for_timeout(100)
        page.screenshot(path=str(ARTIFACTS / f"{name}-bottom.png"))


# The current notebook's code cells without an execution count, and its kernel's status.
JS_PENDING = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.model.cells;
  let pending = 0;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type === 'code' && !cell.executionCount) pending++;
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const errors = panel.node.querySelectorAll(
    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"],' +
    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]').length;
  return {pending, errors, status: kernel ? kernel.status : 'none'};
}"""


def run_all(page, timeout: float | None = None) -> dict:
    """Run All, as from JupyterLab's Run menu; wait until every code cell has run (or an
    error shows, or no further cell has run for ``timeout`` seconds: the clock restarts with
    each cell that finishes). Returns the notebook's state and ``pending``, the cells left
    unrun."""
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    timeout = timeout or timeouts.seconds(timeouts.LAB_RUN_ALL)
    last, deadline = None, time.monotonic() + timeout
    while True:
        page.wait_for_timeout(250)
        run = page.evaluate(JS_PENDING)
        if run["pending"] != last:
            last, deadline = run["pending"], time.monotonic() + timeout
        finished = run["pending"] == 0 and run["status"] == "idle"
        if finished or run["errors"] or time.monotonic() > deadline:
            state = page.evaluate(JS_STATE)
            return {**state, "pending": run["pending"]}


INPUTS = ".widget-slider .noUi-handle, .widget-toggle-buttons, input[type=checkbox], select"
# For each live control: its inputs (slider handle, buttons, checkbox, drop-down) and its
# picture (the ``Stack`` of the control's frames shows one ``Image`` at a time).
JS_CONTROLS = """() => Array.from(document.querySelectorAll('NOTEBOOK .jp-OutputArea-output'))
  .filter(o => o.querySelector('.live-picture, .widget-image') &&
               o.querySelector('INPUTS'))
  .map((o, i) => { o.dataset.control = i; return o.querySelectorAll('INPUTS').length; })
""".replace("NOTEBOOK", NOTEBOOK).replace("INPUTS", INPUTS)

# Arm a watch on one control's picture; returns the focused input's kind, and whether it is a
# slider at its largest value. The key press then goes through Playwright, like a user's;
# ``window.__latency`` resolves to the time from that key press to a picture with other pixels
# being loaded and on screen (ms), or null (no new picture within 5 s, or the same pixels).
JS_ARM = """([control, input]) => {
  const out = document.querySelector(`[data-control="${control}"]`);
  let el = out.querySelectorAll('INPUTS')[input];
  const buttons = el.classList.contains('widget-toggle-buttons');
  if (buttons) el = el.querySelector('button:not(.mod-active)');
  const shown = () => Array.from(out.querySelectorAll('.live-picture img, .widget-image'))
    .find(i => i.offsetParent !== null);
  // The pixels of the frame shown: the live picture's <img> is a sprite, clipped to one
  // frame (its box says which rows).
  const pixels = (img) => {
    const box = img.closest('.live-picture');
    const [w, h, row] = box ? [+box.dataset.width, +box.dataset.height, +box.dataset.row]
      : [img.naturalWidth, img.naturalHeight, 0];
    const c = document.createElement('canvas');
    c.width = w; c.height = h;
    const g = c.getContext('2d'); g.drawImage(img, 0, row, w, h, 0, 0, w, h);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let sum = 0;
    for (let i = 0; i < d.length; i += 4) {
      sum = (sum * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) | 0;
    }
    return w + 'x' + h + ':' + row + ':' + sum;
  };
  el.scrollIntoView({block: 'center'});
  el.focus();
  const before = shown(), beforeSrc = before && before.src;
  const beforeTransform = before && before.style.transform;
  const beforePixels = before && before.naturalWidth ? pixels(before) : null;
  let t0 = null;
  document.addEventListener('keydown', () => { t0 = performance.now(); },
                            {capture: true, once: true});
  window.__latency = new Promise(resolve => {
    const timer = setTimeout(() => { obs.disconnect(); resolve(null); }, 5000);
    const check = () => {
      const img = shown();
      if (!img || (img === before && img.src === beforeSrc &&
                   img.style.transform === beforeTransform)) return;
      obs.disconnect(); clearTimeout(timer);
      const done = () => requestAnimationFrame(() => {
        const ms = performance.now() - t0;
        resolve(pixels(img) !== beforePixels ? ms : null);
      });
      img.complete && img.naturalWidth ? done() : img.addEventListener('load', done, {once: true});
    };
    const obs = new MutationObserver(check);
    obs.observe(out, {subtree: true, childList: true, attributes: true,
                      attributeFilter: ['src', 'class', 'style']});
  });
  const kind = buttons ? 'buttons' : el.tagName === 'SELECT' ? 'select'
    : el.type === 'checkbox' ? 'checkbox' : 'slider';
  // a slider at its largest value moves only one way
  const atMax = kind === 'slider' &&
    el.getAttribute('aria-valuenow') === el.getAttribute('aria-valuemax');
  return [kind, atMax];
}""".replace("INPUTS", INPUTS)
KEYS = {"slider": ("ArrowRight", "ArrowLeft"), "checkbox": ("Space", "Space"),
        "buttons": ("Space", "Space"), "select": ("ArrowDown", "ArrowUp")}


def expected_controls(chapter: Path) -> int:
    """How many controls the chapter displays: outputs ``Control(...)`` in its reference."""
    nb = nbformat.read(reference_path(chapter), as_version=4)
    return sum(out.get("data", {}).get("text/plain", "").startswith("Control(")
               for cell in nb.cells if cell.cell_type == "code"
               for out in cell.get("outputs", []))


def live_controls(page, expected: int, timeout: float | None = None) -> list[int]:
    """The number of inputs of each live control on the page, once ``expected`` are shown."""
    deadline = time.monotonic() + (timeout or timeouts.seconds(timeouts.LAB_CONTROLS))
    while len(counts := page.evaluate(JS_CONTROLS)) < expected:
        if time.monotonic() > deadline:
            break
        page.wait_for_timeout(250)
    return counts


def control_latencies(page, counts: list[int], presses: int = 5) -> list[dict]:
    """Move every input of every live control with the keyboard, ``presses`` times, and time
    each key press to the new image being on screen (ms). One dict per input:
    ``{control, input, kind, latencies}``; a ``None`` latency means the image did not change
    (after a second try in the other direction, in case the input was at its end)."""
    results = []
    for control, n_inputs in enumerate(counts):
        # Last input first: a choice (e.g. the mask pattern) can make a later input moot.
        for i in reversed(range(n_inputs)):
            times, kind = [], None
            for k in range(presses):
                for key in (k % 2, (k + 1) % 2):
                    kind, at_max = page.evaluate(JS_ARM, [control, i])
                    if at_max:
                        key = 1  # ArrowLeft
                    page.keyboard.press(KEYS[kind][key])
                    latency = page.evaluate("() => window.__latency")
                    page.wait_for_timeout(100)
                    if latency is not None:
                        break
                times.append(latency)
            results.append({"control": control, "input": i, "kind": kind, "latencies": times})
    return results


# What JupyterLab's module federation logs when an extension was built for another JupyterLab.
VERSION_WARNINGS = ("Unsatisfied version", "No satisfying version")


def save(page, timeout: float | None = None) -> None:
    """Save the notebook as from File > Save; wait until it is no longer marked modified."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty",
                           timeout=(timeout or timeouts.seconds(timeouts.LAB_SAVE)) * 1000,
                           polling=100)


#: Where each walk keeps its chapter's notebook after Run All, outputs and all, for nbval to
#: compare with the references (:data:`OUTPUTS`).
LAB_OUTPUTS = ARTIFACTS / "lab-outputs"


def keep_outputs(page, chapter: Path) -> None:
    """Write the notebook open in ``page`` (JupyterLab's model of it, outputs included) to
    ``LAB_OUTPUTS/<chapter>.ipynb``."""
    content = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.model.toJSON()")
    for cell in content["cells"]:  # JupyterLab writes a Markdown cell's absent attachments as null
        for key in [k for k, v in cell.items() if v is None and k != "execution_count"]:
            del cell[key]
    LAB_OUTPUTS.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.from_dict(content), LAB_OUTPUTS / f"{chapter.stem}.ipynb")


def walk_problems(page, chapter: Path, saved: Path, console: list[str]) -> list[str]:
    """What a learner would find wrong in ``chapter`` open in JupyterLab (see the test)."""
    nb = read_chapter(chapter)
    folded = sum(c.cell_type == "code" and bool(c.metadata.get("jupyter", {}).get("source_hidden"))
                 for c in nb.cells)
    if shots.wanted():  # every cell is rendered already (windowing "none", see postBuild)
        scroll_through(page, name=f"lab-{chapter.stem}")
    state = page.evaluate(JS_STATE)
    problems = [f"shows {t!r}" for t in state["notFound"]]
    problems += [f"raw MyST in the rendered text: {m!r}" for m in
                 RAW_MYST.findall(state["text"])[:5]]
    if state["collapsed"] != folded:
        problems.append(f"{state['collapsed']} collapsed code cells, expected {folded}")
    run = run_all(page)
    keep_outputs(page, chapter)
    problems += [f"Run All: error output {e!r}" for e in run["errors"]]
    if run["pending"]:
        problems.append(f"Run All: {run['pending']} code cells did not run")
    if run["solutionsShown"]:
        problems.append(f"after Run All, {run['solutionsShown']} collapsed cells (solutions) "
                        "show their output")
    expected = expected_controls(chapter)
    counts = live_controls(page, expected)
    if len(counts) != expected:
        problems.append(f"{len(counts)} live controls, expected {expected}")
    for m in control_latencies(page, counts, presses=1):
        if not any(m["latencies"]):
            problems.append(f"control {m['control']}, input {m['input']} ({m['kind']}): "
                            "the picture does not change when moved by keyboard")
    if counts and shots.wanted():
        page.locator("[data-control='0']").screenshot(
            path=str(ARTIFACTS / f"lab-{chapter.stem}-control.png"))
    solution = page.locator(f"{NOTEBOOK} .jp-CodeCell:has(.jp-InputPlaceholder)")
    if shots.wanted() and solution.count():
        solution.first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"lab-{chapter.stem}-solution.png"))
    save(page)
    if saved.read_bytes() != chapter.read_bytes():
        problems.append("saving the notebook rewrote the chapter's file")
    problems += [f"console: {t[:200]}" for t in console
                 if any(w in t for w in VERSION_WARNINGS)][:3]
    return problems


def close_documents(page) -> None:
    """Close every document open in the page's JupyterLab (a walk has saved its notebook)."""
    page.evaluate("() => { for (const w of Array.from(window.jupyterapp.shell.widgets('main')))"
                  " w.dispose(); }")
    page.wait_for_function(f"() => !document.querySelector('{NOTEBOOK}')", polling=100)


def walk(server: JupyterLab, chromium, chapter: Path, reuse=None):
    """Open ``chapter`` in ``server``'s JupyterLab and walk through it (:func:`walk_problems`);
    its copy is restored afterwards whatever happened, and the chapter's kernel shut down.

    ``reuse`` is what the previous walk returned: its page, with JupyterLab loaded and no
    document open, and that page's console log; the chapter opens there. Returns the problems
    and what the next walk can reuse (None after a walk that broke: the next one loads
    JupyterLab afresh)."""
    page, console = reuse if reuse else (None, [])
    ARTIFACTS.mkdir(exist_ok=True)
    with unchanged(server.file(chapter)):
        try:
            if page is None:
                page = open_chapter(chromium, server, chapter, watch=lambda p: p.on(
                    "console", lambda m: console.append(m.text)))
            else:
                open_chapter(chromium, server, chapter, page=page)
            problems = walk_problems(page, chapter, server.file(chapter), console)
            close_documents(page)
        except BaseException:
            if page is not None:  # left as it broke: the next walk starts afresh
                page.close()
            raise
        finally:
            server.end_sessions()
    return problems, (page, console)


#: The last job of the walks: nbval compares the outputs each walk kept (:func:`keep_outputs`)
#: with the references; the chapters' kernels ran on the emulated processor
#: :data:`tests.test_portability.LAB`, whose test reads the comparison.
OUTPUTS = "outputs"


class Walks(Background):
    """The walks through every chapter, in a thread of their own with their own JupyterLab and
    browser, started right after collection (``tests/conftest.py``): a walk mostly waits on the
    browser and the kernel, so the rest of the suite runs meanwhile. A job is a chapter, or
    :data:`OUTPUTS`. The server and its kernels run on the emulated processor
    :data:`tests.test_portability.LAB`."""

    name = "jupyterlab-walks"
    limit = timeouts.LAB_WALK

    def __init__(self):
        super().__init__()
        self.server: JupyterLab | None = None

    def available(self) -> bool:
        return CHROMIUM is not None

    def default_jobs(self) -> list:
        return [*chapter_paths(), OUTPUTS]

    @contextlib.contextmanager
    def session(self):
        shutil.rmtree(LAB_OUTPUTS, ignore_errors=True)
        with running_lab(test_portability.CONFIGS[test_portability.LAB]) as server, \
                browser() as chromium:
            self.server = server
            reuse = None  # JupyterLab's page, loaded once for every walk

            def run(job) -> list[str]:
                nonlocal reuse
                if job == OUTPUTS:
                    return compare_outputs([j for j in self.jobs if j != OUTPUTS])
                try:
                    problems, reuse = walk(server, chromium, job, reuse)
                except Exception:  # a walk that broke: the next one loads JupyterLab afresh
                    reuse = None
                    raise
                return problems

            yield run

    def describe(self, job) -> str:
        return "comparison of the walks' outputs" if job == OUTPUTS else f"walk through {job.name}"

    def stop(self) -> None:
        """Stop after the current walk (a session cut short); stop the JupyterLab server."""
        super().stop()
        if self.thread is not None and self.thread.is_alive() and self.server is not None:
            self.server.stop()


def compare_outputs(chapters: list[Path]) -> list[str]:
    """nbval's comparison of the outputs the walks kept with the references, in a child
    process, into :data:`tests.test_portability.LAB`'s report (its test reads it)."""
    test_portability.nbval_run(test_portability.LAB,
                               [str(c.relative_to(ROOT)) for c in chapters],
                               f"--outputs-from={LAB_OUTPUTS}")
    return []


WALKS = Walks()


@pytest.mark.parametrize("chapter", chapter_paths(), ids=lambda p: p.stem)
def test_chapter_in_jupyterlab(chapter):
    """A learner's walk through the chapter in JupyterLab, in a real browser: it opens as a
    notebook; rendered, it shows no "Not Found" reference or citation and no raw MyST,
    and its solutions' cells are collapsed; Run All runs every cell with no error output and
    leaves the solutions' output folded; every live control's picture changes when each of its
    inputs is moved with the keyboard; saving leaves the file byte for byte as it was; and no
    extension was built for another JupyterLab. Screenshots (``make screenshots``):
    ``tests/artifacts/lab-*.png``. (The walks run in :data:`WALKS`' thread; this test waits for
    this chapter's. What the chapter printed after Run All is compared with the references in
    ``tests/test_portability.py``.)"""
    if CHROMIUM is None:
        pytest.skip("needs Debian's chromium (apt-get install -y chromium)")
    problems = WALKS.result(chapter)
    assert not problems, f"{chapter.name} in JupyterLab:\n  " + "\n  ".join(problems)


def lab_latencies(presses: int = 9) -> dict[str, dict]:
    """Median input-to-image latency (ms) of each live control input in JupyterLab, for
    ``benchmarks/run.py``: ``{"<chapter> control <i> <kind>": {"median": ..., "all": [...]}}``."""
    out = {}
    with running_lab() as server, browser() as chromium:
        for chapter in chapter_paths():
            with unchanged(server.file(chapter)):
                page = open_chapter(chromium, server, chapter)
                run_all(page)
                counts = live_controls(page, expected_controls(chapter))
                for m in control_latencies(page, counts, presses=presses):
                    ok = [t for t in m["latencies"] if t is not None]
                    out[f"{chapter.stem} control {m['control']} input {m['input']} "
                        f"({m['kind']})"] = {
                        "median": statistics.median(ok) if ok else None, "all": m["latencies"]}
                page.close()
    return out
