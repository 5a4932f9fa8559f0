"""The rendered website in a real browser: headless Chromium, offline, page by page.

Playwright for Python drives Debian's Chromium (``executable_path``; no browser is
downloaded, CI installs ``chromium`` in ``.ci/run``). The built site is served from
127.0.0.1 with every other host unresolvable (a reader on a train). Each page is loaded once
per view and checked as a reader would meet it:

* **desktop, light theme**: nothing is requested from another host, no request fails (no
  404), no JavaScript exception or console error; every figure has loaded and has alt text;
  the first screen's math is typeset soon after the load; every no-kernel control follows its
  inputs and each slider announces its shown value (``aria-valuetext``); axe-core finds no
  critical, serious or moderate violation (the contrast of math and code, whose colours every
  page shares, is checked once, on one chapter);
* **dark theme** (same load): figures keep their light background;
* **phone** (390 px), **from a file URL** (no server): every equation is typeset once the
  reader has scrolled to it, with no MathJax error, raw TeX or error text left; no display
  equation is cut off (it fits, or its box scrolls and shows a cue), figure text stays
  legible, each control's label sits with its value in the screen; figures and controls work
  with no server; and, the typeset page widened to 1280 px, every display equation fits the
  text column (none scrolls sideways).

These page checks run in a thread of their own from the end of collection on
(:data:`PAGES`), beside the rest of the suite, as the JupyterLab walks do.

And once: the skip links lead to each control, search results show math as text, and Live
Code explains offline that it needs a network. Screenshots (each page's first screen, light,
dark and phone, and each control) go to ``tests/artifacts/`` with ``make screenshots``
(:mod:`tests.shots`).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from tests import shots, timeouts
from tests.background import Background
from tests.nbharness import ROOT
from tests.site_build import built_site, page_names

ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)

if CHROMIUM is None and os.environ.get("CI"):
    pytest.fail("CI must install chromium (see .ci/run)", pytrace=False)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="needs Debian's chromium (apt-get install -y chromium); .ci/run installs it",
)

ERROR_TEXT = ("Traceback (most recent call last)", "Error displaying widget", "Exception:",
              "NameError", "ModuleNotFoundError", "Loading widget...", "Widget Javascript not",
              "[glue:", "Unknown directive", "Unknown interpreted text role")
RAW_TEX = ("$$", "\\(", "\\[", "\\begin{", "\\frac", "\\operatorname")
#: axe-core impacts that fail the test. "minor" ones do not: a header cell holding only math
#: (the "cos θ" column) is empty to axe, which cannot read text that MathJax draws with CSS.
AXE_FAILING = ("critical", "serious", "moderate")
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
#: The smallest legible text in a figure, in CSS pixels, and the first screen's math budget.
MIN_TEXT_PX = 9.0
FIRST_SCREEN_SECONDS = 3.0  # `make bench` reports the time itself against its 1 s target
#: Figures are drawn at 100 dpi with 9-point text at the smallest (lib.plotting's house style).
HOUSE_TEXT_PX = 12.5


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(directory: Path):
    """The folder served on 127.0.0.1 (a free port), as its URL."""
    handler = functools.partial(Quiet, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextlib.contextmanager
def launched():
    """Debian's Chromium, headless, with every host but 127.0.0.1 unresolvable."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def server():
    with serving(built_site()) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    pytest.importorskip("playwright.sync_api")
    with launched() as b:
        yield b


class Visit:
    """One page in a fresh browser context, with what it requested and logged."""

    def __init__(self, browser, url, viewport=DESKTOP):
        self.context = browser.new_context(viewport=viewport)
        self.page = self.context.new_page()
        self.page.set_default_timeout(timeouts.ms(timeouts.PAGE_ACTION))
        self.requests, self.failed, self.errors, self.console = [], [], [], []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("requestfailed", lambda r: self.failed.append(r.url))
        self.page.on("response", lambda r: r.status >= 400 and self.failed.append(
            f"{r.status} {r.url}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: m.type == "error" and self.console.append(m.text))
        self.page.goto(url, wait_until="load")

    def js(self, script, arg=None):
        return self.page.evaluate(script, arg)

    def close(self):
        self.context.close()


@pytest.fixture
def visit(browser):
    visits = []

    def open_page(url, viewport=DESKTOP):
        visits.append(Visit(browser, url, viewport))
        return visits[-1]

    yield open_page
    for v in visits:
        v.close()


# Waits until every equation on the first screen is typeset; returns how many there are and
# how long after the page's load event that was (milliseconds).
FIRST_SCREEN = r"""
async () => {
  const loaded = performance.getEntriesByType('navigation')[0].loadEventEnd;
  if (!document.querySelector('main .math')) { return {count: 0, ms: 0}; }
  const deadline = performance.now() + 20000;  // then report what is typeset by then
  const wait = () => new Promise(r => setTimeout(r, 10));
  while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) &&
         performance.now() < deadline) { await wait(); }
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  const onScreen = () => Array.from(document.querySelectorAll('main .math')).filter(e => {
    const r = e.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight && r.width > 0;
  });
  while (onScreen().some(e => !e.querySelector('mjx-container')) &&
         performance.now() < deadline) { await wait(); }
  return {count: onScreen().length, ms: performance.now() - loaded};
}
"""

# Reports what a reader sees; with ``true``, after typesetting every equation (as if the reader
# had scrolled through the page).
INSPECT = r"""
async (typesetAll) => {
  if (typesetAll && window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    const doc = MathJax.startup.document;
    if (doc.lazyTypesetAll) { await doc.lazyTypesetAll(); }
  }
  const main = document.querySelector('main') || document.body;
  const imgs = Array.from(main.querySelectorAll('img')).filter(i => !i.closest('.navbar-brand')
                                                              && !i.closest('[aria-hidden]'));
  await Promise.all(imgs.map(i => i.decode().catch(() => null)));
  const clone = main.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, .MathJax')
       .forEach(e => e.remove());
  const math = Array.from(main.querySelectorAll('span.math, div.math'));
  return {
    images: imgs.map(i => ({src: i.src.slice(0, 80), alt: i.alt,
                            ok: i.complete && i.naturalWidth > 0})),
    mathSources: math.length,
    typeset: math.filter(e => e.querySelector('mjx-container')).length,
    mathjaxErrors: main.querySelectorAll('mjx-merror, [data-mjx-error]').length,
    hasMathJax: !!window.MathJax,
    text: clone.innerText,
    explorables: main.querySelectorAll('.explorable').length,
  };
}
"""

# Moves every control of every explorable through all its values and reports whether the
# picture (the right sprite, placed on the right frame: by its style and as laid out), its alt
# text, the shown value and the slider's aria-valuetext follow. Frame k is the k-th state of
# the control's list of alt texts (the states in drawing order).
EXPLORE = r"""
() => {
  const results = [];
  document.querySelectorAll('.explorable').forEach((root, n) => {
    const view = root.querySelector('.explorable-view');
    const img = view.querySelector('img');
    const data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
    const geo = data.sprite;
    const keys = Object.keys(data.alts);
    const sprites = data.sprites.map(s => s || img.src);  // null: the <img>'s own source
    root.querySelectorAll('[data-param]').forEach((el) => {
      const p = +el.dataset.param;
      const count = el.type === 'checkbox' ? 2 : el.type === 'range' ? (+el.max + 1)
                                                                     : el.options.length;
      const old = el.type === 'checkbox' ? el.checked : el.value;
      const output = root.querySelector(`output[for="${el.id}"]`);
      const label = root.querySelector(`label[for="${el.id}"]`);
      const seen = new Set([img.src + img.style.transform]);
      const wrong = [];
      for (let v = 0; v < count; v++) {
        if (el.type === 'checkbox') { el.checked = !!v; } else { el.value = String(v); }
        el.dispatchEvent(new Event('input', {bubbles: true}));
        el.dispatchEvent(new Event('change', {bubbles: true}));
        const state = root.dataset.state;
        const k = keys.indexOf(state);
        const row = (k % geo.perSprite) * (geo.height + 2 * geo.pad) + geo.pad;
        const shown = data.labels[p][v];
        // on a narrow screen the first view shows the frame's first piece, from row y0
        const split = root.querySelector('.explorable-figure')
                          .classList.contains('explorable-split');
        const piece = split ? geo.pieces[0] : [0, geo.width, 0, geo.height];
        const scale = view.getBoundingClientRect().width / (piece[1] - piece[0]);
        const offset = view.getBoundingClientRect().top - img.getBoundingClientRect().top;
        const first = k - k % geo.perSprite;
        const rows = Math.min(geo.perSprite, geo.count - first) * (geo.height + 2 * geo.pad);
        const shift = /translateY\((-?[\d.]+)%\)/.exec(img.style.transform);
        if (k < 0 || +state.split(',')[p] !== v ||
            img.src !== sprites[Math.floor(k / geo.perSprite)] ||
            // the style as set (a browser keeps six digits) and the picture as laid out
            !shift || Math.abs(parseFloat(shift[1]) + 100 * (row + piece[2]) / rows) > 1e-3 ||
            (scale > 0 && Math.abs(offset - (row + piece[2]) * scale) > 0.5) ||
            img.alt !== data.alts[state] || !img.alt ||
            (output && output.textContent !== shown) ||
            (el.type === 'range' && el.getAttribute('aria-valuetext') !== shown)) {
          wrong.push(v);
        }
        seen.add(img.src + img.style.transform);
      }
      if (el.type === 'checkbox') { el.checked = old; } else { el.value = old; }
      el.dispatchEvent(new Event('input', {bubbles: true}));
      results.push({explorable: n, param: p, type: el.type, values: count,
                    labelled: !!label && !!label.textContent.trim(),
                    shownValue: el.type !== 'range' || !!output,
                    picturesAtDefaults: seen.size, wrong: wrong});
    });
  });
  return results;
}
"""

# Each explorable's data and the source of its <img> (the sprite it opened with).
EXPLORABLE_DATA = r"""
() => Array.from(document.querySelectorAll('.explorable'), root => ({
  data: JSON.parse(root.querySelector('script[type="application/json"]').textContent),
  src: root.querySelector('.explorable-view img').src,
}))
"""


def frame_digests(data: dict, src: str) -> list[bytes]:
    """A digest of each frame of an explorable, cut out of its decoded sprites."""
    import base64
    import hashlib
    import io

    import numpy as np
    from PIL import Image

    geo, digests = data["sprite"], []
    slot = geo["height"] + 2 * geo["pad"]
    for url in data["sprites"]:
        raw = base64.b64decode((url or src).split(",", 1)[1])
        pixels = np.asarray(Image.open(io.BytesIO(raw)).convert("RGB"))
        for top in range(geo["pad"], pixels.shape[0], slot):
            digests.append(hashlib.sha1(pixels[top:top + geo["height"]].tobytes()).digest())
    return digests[:geo["count"]]


def dead_parameters(v: Visit) -> list[str]:
    """Parameters that change the picture for no setting of the others (dead controls)."""
    problems = []
    for n, found in enumerate(v.js(EXPLORABLE_DATA)):
        data = found["data"]
        keys = list(data["alts"])
        digest = dict(zip(keys, frame_digests(data, found["src"]), strict=True))
        if len(digest) != data["sprite"]["count"]:
            problems.append(f"explorable {n}: {len(digest)} frames for "
                            f"{data['sprite']['count']} states")
        for p in range(len(data["labels"])):
            others = {}
            for key in keys:
                parts = key.split(",")
                rest = tuple(parts[:p] + parts[p + 1:])
                others.setdefault(rest, set()).add(digest[key])
            if not any(len(seen) > 1 for seen in others.values()):
                problems.append(f"explorable {n}: parameter {p} never changes the picture "
                                "(dead control)")
    return problems


# The colour of each figure's top-left pixel (its own background).
CORNERS = r"""
() => Array.from(document.querySelectorAll('main img')).filter(i => i.naturalWidth > 0 &&
    !i.closest('.navbar-brand')).map(i => {
  const c = document.createElement('canvas'); c.width = 4; c.height = 4;
  const g = c.getContext('2d'); g.drawImage(i, 0, 0, 4, 4, 0, 0, 4, 4);
  return {src: i.src.slice(0, 60), rgba: Array.from(g.getImageData(1, 1, 1, 1).data)};
})
"""

# On a phone: equations and figures either fit the screen or sit in a box that scrolls and
# shows it; figure text keeps a legible size; each control's label and value are on screen.
PHONE_CHECK = r"""
([minText, houseText]) => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  const cue = (box) => {
    const s = getComputedStyle(box);
    const mask = s.maskImage || s.webkitMaskImage || 'none';
    return /auto|scroll/.test(s.overflowX) && (s.boxShadow !== 'none' || mask !== 'none');
  };
  // The nearest box that clips `el` sideways (or null: the screen does).
  const clipOf = (el) => {
    for (let e = el.parentElement; e && e !== document.documentElement; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== 'visible') { return e; }
    }
    return null;
  };
  // `content` fits the screen, or its clipping box is on screen, scrolls and shows a cue.
  const fits = (content, what) => {
    const r = content.getBoundingClientRect();
    const clip = clipOf(content);
    const c = clip ? clip.getBoundingClientRect() : {left: 0, right: vw};
    if (r.left >= Math.max(c.left, 0) - 1 && r.right <= Math.min(c.right, vw) + 1) { return; }
    const label = (content.closest('div.math') || content).textContent.trim().slice(0, 60)
                  || content.alt;
    if (!clip || c.left < -1 || c.right > vw + 1) {
      problems.push(`${what} runs off the screen (${Math.round(r.left)}..${Math.round(r.right)}`
                    + ` of ${vw} px): ${label}`);
    } else if (!cue(clip)) {
      problems.push(`${what} is cut off with no cue that it scrolls: ${label}`);
    }
  };
  document.querySelectorAll('main div.math').forEach(m => {
    const math = m.querySelector('mjx-math');
    if (math) { fits(math, 'equation'); }
  });
  document.querySelectorAll('main img').forEach(img => {
    const shownWidth = img.getBoundingClientRect().width;
    if (!img.naturalWidth || !shownWidth || img.closest('.navbar-brand')) { return; }
    const textPx = +(img.dataset.textPx || houseText);
    const shown = textPx * shownWidth / img.naturalWidth;
    if (shown < minText - 0.05) {
      problems.push(`figure text ${shown.toFixed(1)} px high: ${img.alt.slice(0, 60)}`);
    }
    fits(img.closest('.explorable-view') || img, 'figure');  // a control's box clips its sprite
  });
  document.querySelectorAll('.explorable-param').forEach(param => {
    const parts = Array.from(param.querySelectorAll('label, input, select, output'));
    const rects = parts.map(e => e.getBoundingClientRect());
    if (rects.some(r => r.left < -1 || r.right > vw + 1)) {
      problems.push(`control input off the screen: ${param.textContent.slice(0, 40)}`);
    }
    const label = param.querySelector('label').getBoundingClientRect();
    const value = param.querySelector('output, input[type="checkbox"], select');
    if (value) {
      const v = value.getBoundingClientRect();
      if (v.top > label.bottom || v.bottom < label.top) {
        problems.push(`control label and value on different rows: ${param.textContent}`);
      }
    }
  });
  return problems;
}
"""


# On a narrow screen a control may show its frame in two stacked pieces: both follow the
# inputs (the same sprite, each placed on its own rows of the current frame), and together
# they show the frame's whole width.
PIECES_CHECK = r"""
() => {
  const problems = [];
  document.querySelectorAll('.explorable').forEach((root, n) => {
    const data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
    const geo = data.sprite;
    const views = Array.from(root.querySelectorAll('.explorable-view')).filter(v => !v.hidden);
    if (views.length < 2) { return; }
    const pieces = geo.pieces;
    if (!pieces || views.length !== pieces.length) {
      problems.push(`explorable ${n}: ${views.length} pieces shown for ${JSON.stringify(pieces)}`);
      return;
    }
    const widths = pieces.map(p => p[1] - p[0]);
    if (widths.reduce((a, b) => a + b) !== geo.width || pieces[0][0] !== 0) {
      problems.push(`explorable ${n}: pieces ${JSON.stringify(pieces)} do not tile the frame`);
    }
    const keys = Object.keys(data.alts);
    const el = root.querySelector('[data-param]');
    const count = el.type === 'checkbox' ? 2 : el.type === 'range' ? (+el.max + 1)
                                                                   : el.options.length;
    const old = el.type === 'checkbox' ? el.checked : el.value;
    for (let v = 0; v < count; v++) {
      if (el.type === 'checkbox') { el.checked = !!v; } else { el.value = String(v); }
      el.dispatchEvent(new Event('input', {bubbles: true}));
      const k = keys.indexOf(root.dataset.state);
      const row = (k % geo.perSprite) * (geo.height + 2 * geo.pad) + geo.pad;
      const src = views[0].querySelector('img').src;
      views.forEach((view, i) => {
        const img = view.querySelector('img'), box = view.getBoundingClientRect();
        const r = img.getBoundingClientRect();
        const scale = box.width / widths[i];
        if (img.src !== src || Math.abs((box.top - r.top) - (row + pieces[i][2]) * scale) > 0.5
            || Math.abs((box.left - r.left) - pieces[i][0] * scale) > 0.5) {
          problems.push(`explorable ${n}: piece ${i} misplaced at value ${v}`);
        }
      });
    }
    if (el.type === 'checkbox') { el.checked = old; } else { el.value = old; }
    el.dispatchEvent(new Event('input', {bubbles: true}));
  });
  return problems;
}
"""


# On a phone: how many display equations scroll sideways, and how many figures (outside the
# controls, which have their own narrow pieces) are wider than the text column. On a desktop
# the same count of equations, which must be 0 (:func:`wide_equation_problems`).
NARROW_COUNTS = r"""
() => {
  const column = document.querySelector('main article') || document.querySelector('main');
  const width = column.getBoundingClientRect().width;
  const eqs = Array.from(document.querySelectorAll('main div.math'));
  // measured against the box that scrolls, MathJax's container, which a numbered equation
  // shares with its number (the div around both is wider)
  const scrolling = eqs.filter(m => {
    const box = m.querySelector('mjx-container');
    const math = box && box.querySelector('mjx-math');
    return math && math.getBoundingClientRect().width > box.clientWidth + 1;
  }).length;
  const figs = Array.from(document.querySelectorAll('main img')).filter(
    img => img.naturalWidth && !img.closest('.explorable, .navbar-brand'));
  const wide = figs.filter(img => img.getBoundingClientRect().width > width + 1).length;
  return {equations: eqs.length, scrolling, figures: figs.length, wide};
}
"""
#: At most this share of a page's display equations may scroll sideways on a phone.
SCROLLING_SHARE = 0.10
def narrow_problems(page: str, counts: dict) -> list[str]:
    """What :data:`NARROW_COUNTS` found on ``page``, against the limits: at most
    SCROLLING_SHARE of the display equations scroll, no static figure is wider than the
    column (every page fits both since issue 36)."""
    problems = []
    if counts["scrolling"] > SCROLLING_SHARE * counts["equations"]:
        problems.append(f"{counts['scrolling']} of {counts['equations']} display equations "
                        "scroll sideways (break long ones at their joints)")
    if counts["wide"]:
        problems.append(f"{counts['wide']} of {counts['figures']} figures are wider than the "
                        "screen (lib.widgets.narrow draws a narrow variant in the site's build; "
                        "steer it with set_narrow)")
    return problems


# Typesets every equation of the page (MathJax typesets lazily, as the reader scrolls).
TYPESET_ALL = r"""
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    const doc = MathJax.startup.document;
    if (doc.lazyTypesetAll) { await doc.lazyTypesetAll(); }
  }
}
"""


# Resolves after the next two frames: a layout after a change of viewport has been drawn.
TWO_FRAMES = """() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"""


def wide_equation_problems(page: str, counts: dict) -> list[str]:
    """On a desktop every display equation fits the text column (issue 36): what
    :data:`NARROW_COUNTS` found scrolling on ``page`` at 1280 px, if any."""
    if not counts["scrolling"]:
        return []
    return [f"{page}: {counts['scrolling']} of {counts['equations']} display equations are "
            f"wider than the text column at {DESKTOP['width']} px (break them at their joints)"]


def page_problems(v: Visit, origin: str) -> list[str]:
    """What went wrong while loading: other hosts, failed requests, exceptions, console."""
    problems = []
    outside = [u for u in v.requests if not u.startswith((origin, "data:", "blob:", "about:"))]
    if outside:
        problems.append(f"requests to other hosts (the site must work offline): {outside}")
    if v.failed:
        problems.append(f"failed requests: {v.failed}")
    if v.errors:
        problems.append(f"JavaScript exceptions: {v.errors}")
    if v.console:
        problems.append(f"console errors: {v.console}")
    return problems


def content_problems(info: dict) -> list[str]:
    """Figures without pictures or alt text, untypeset math, raw TeX, error text."""
    problems = image_problems(info)
    if info["mathSources"]:
        if not info["hasMathJax"]:
            problems.append("the page has math but MathJax did not load")
        elif info["typeset"] != info["mathSources"]:
            problems.append(f"{info['mathSources']} equations, only {info['typeset']} typeset")
    if info["mathjaxErrors"]:
        problems.append(f"{info['mathjaxErrors']} equations failed to typeset (MathJax errors)")
    for raw in RAW_TEX:
        if raw in info["text"]:
            at = info["text"].index(raw)
            problems.append(f"raw TeX {raw!r} in the text: ...{info['text'][at - 60:at + 60]}...")
    problems += [f"error text {bad!r} on the page" for bad in ERROR_TEXT if bad in info["text"]]
    return problems


def control_problems(results: list[dict]) -> list[str]:
    problems = []
    for res in results:
        if res["wrong"]:
            problems.append(f"control shows the wrong picture, alt text or value: {res}")
        if not (res["labelled"] and res["shownValue"]):
            problems.append(f"control input without its label or shown value: {res}")
    if results and not any(res["picturesAtDefaults"] > 1 for res in results):
        problems.append("no control changes the picture from the default view")
    return problems


#: What the per-page colour-contrast check leaves out: MathJax's glyphs (one node per
#: character, a third of a chapter's elements) and highlighted code (a span per token). Their
#: colours come from stylesheets every page shares (MathJax's, which inherits the text colour,
#: and Pygments'), and :func:`test_math_and_code_colours_contrast` checks them, in full, on
#: one chapter (the math by :data:`MATH_CONTRAST`: axe does not see MathJax's glyphs, which
#: are drawn as pseudo-elements' content). Contrast is most of axe's time on a chapter page.
CONTRAST_SHARED = [["mjx-container"], ["div.highlight"]]


AXE_RUNS = """async (contrastContext) => {
  const other = await axe.run(document, {rules: {'color-contrast': {enabled: false}},
                                         resultTypes: ['violations']});
  const contrast = await axe.run(contrastContext || document,
                                 {runOnly: ['color-contrast'], resultTypes: ['violations']});
  return other.violations.concat(contrast.violations);
}"""


#: Every rule of axe on the elements of :data:`CONTRAST_SHARED` only.
AXE_SHARED = """async (include) => (await axe.run({include},
                                                  {resultTypes: ['violations']})).violations"""


def axe_problems(page, shared_only: bool = False) -> list[str]:
    """axe-core's violations at :data:`AXE_FAILING` impacts: every rule on the whole page, the
    colour contrast of text outside :data:`CONTRAST_SHARED` (two runs, since a rule cannot
    have a context of its own); or, ``shared_only``, every rule on the elements of
    :data:`CONTRAST_SHARED` only (the rest of the page has its own check)."""
    from axe_playwright_python.sync_playwright import Axe

    page.evaluate(Axe().axe_script)
    violations = (page.evaluate(AXE_SHARED, CONTRAST_SHARED) if shared_only
                  else page.evaluate(AXE_RUNS, {"exclude": CONTRAST_SHARED}))
    return [f"axe {v['impact']} {v['id']}: {v['help']} at "
            f"{[n['target'] for n in v['nodes']][:3]}"
            for v in violations if v["impact"] in AXE_FAILING]


def dark_problems(v: Visit, name: str) -> list[str]:
    v.js("() => { document.documentElement.dataset.theme = 'dark';"
         " document.documentElement.dataset.mode = 'dark'; }")
    v.page.wait_for_timeout(200)
    if shots.wanted():  # the first screen: full pages take seconds to encode
        v.page.screenshot(path=ARTIFACTS / f"{name}-dark.png")
    return [f"figure with a dark background in the dark theme: {c['src']}"
            for c in v.js(CORNERS)
            if c["rgba"][3] > 0 and sum(c["rgba"][:3]) / 3 < 150]


def screenshots(v: Visit, name: str, view: str) -> None:
    """The first screen, and each control as the reader sees it, into ``tests/artifacts/``
    (a whole chapter is 40,000 pixels tall: seconds to encode, and too long to look at), when
    asked (:mod:`tests.shots`)."""
    if not shots.wanted():
        return
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    v.page.screenshot(path=ARTIFACTS / f"{name}-{view}.png")
    for n, control in enumerate(v.page.locator("main .explorable").all()):
        control.screenshot(path=ARTIFACTS / f"{name}-{view}-control-{n + 1}.png")


def image_problems(info: dict) -> list[str]:
    """Figures that did not load, or have no alt text."""
    problems = []
    for img in info["images"]:
        if not img["ok"]:
            problems.append(f"figure did not load: {img['src']}")
        if not img["alt"].strip():
            problems.append(f"figure without alt text: {img['src']}")
    return problems


def desktop_problems(browser, server: str, site: Path, page: str) -> list[str]:
    """What a reader at a desk meets on ``page``, served: see :func:`test_page_in_browser`."""
    v = Visit(browser, f"{server}/{page}")
    try:
        first_screen = v.js(FIRST_SCREEN)
        # axe on the page as loaded: the first screen's math is typeset, the rest not yet (a
        # typeset chapter has twice the elements, MathJax's glyphs, which only slow axe down);
        # the phone view typesets every equation, and test_math_and_code_colours_contrast
        # checks a whole typeset page
        seen = len(v.requests), len(v.failed), len(v.console)
        problems = axe_problems(v.page)
        # axe reads the style sheets itself (its CSSOM preload) and resolves a sheet's
        # @import against the page, a 404 of its own: what it requested is not the page's
        del v.requests[seen[0]:], v.failed[seen[1]:], v.console[seen[2]:]
        info = v.js(INSPECT, False)
        name = page.replace("/", "_").removesuffix(".html")
        screenshots(v, name, "light")
        problems += page_problems(v, server) + image_problems(info)
        if first_screen["count"] and first_screen["ms"] > 1000 * FIRST_SCREEN_SECONDS:
            problems.append(f"first screen's math typeset {first_screen['ms'] / 1000:.1f} s "
                            "after the load")
        if info["explorables"]:
            results = v.js(EXPLORE)
            if not results:
                problems.append("explorable controls without inputs")
            problems += control_problems(results) + dead_parameters(v)
        return problems + dark_problems(v, name)
    finally:
        v.close()


def phone_problems(browser, server: str, site: Path, page: str) -> list[str]:
    """What a reader on a phone meets on ``page``, opened from disk: see
    :func:`test_page_on_a_phone_from_a_file_url`."""
    v = Visit(browser, (site / page).as_uri(), viewport=PHONE)
    try:
        info = v.js(INSPECT, True)
        for _ in range(20):  # the scroll cues follow the typeset sizes, a frame or two later
            phone = v.js(PHONE_CHECK, [MIN_TEXT_PX, HOUSE_TEXT_PX])
            if not phone:
                break
            v.page.wait_for_timeout(100)
        screenshots(v, page.replace("/", "_").removesuffix(".html"), "phone")
        problems = page_problems(v, site.as_uri()) + phone + v.js(PIECES_CHECK)
        problems += content_problems(info) + narrow_problems(page, v.js(NARROW_COUNTS))
        if info["explorables"]:
            problems += [f"control shows the wrong picture from a file URL: {r}"
                         for r in v.js(EXPLORE) if r["wrong"]]
        # the same typeset page widened to a desk's (MathJax's output does not depend on the
        # width; typesetting the desktop page again would cost a second typeset)
        v.page.set_viewport_size(DESKTOP)
        v.js(TWO_FRAMES)
        return problems + wide_equation_problems(page, v.js(NARROW_COUNTS))
    finally:
        v.close()


# The contrast of typeset math with what is behind it (WCAG's ratio, at least 4.5), element by
# element: MathJax draws each glyph as a pseudo-element's content, which axe does not see.
# Returns the lowest ratios found under 4.5 (with the colours), at most three.
MATH_CONTRAST = r"""
() => {
  const rgba = s => (s.match(/[\d.]+/g) || []).map(Number);
  const linear = v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  const luminance = c => 0.2126 * linear(c[0]) + 0.7152 * linear(c[1]) + 0.0722 * linear(c[2]);
  const behind = el => {  // the backgrounds from el up to the first opaque one, composited
    const layers = [];
    for (; el; el = el.parentElement) {
      const c = rgba(getComputedStyle(el).backgroundColor);
      const alpha = c.length === 3 ? 1 : c[3];
      if (alpha > 0) layers.push([c, alpha]);
      if (alpha >= 1) break;
    }
    let color = [255, 255, 255];
    for (const [c, alpha] of layers.reverse()) {
      color = color.map((v, i) => c[i] * alpha + v * (1 - alpha));
    }
    return color;
  };
  const low = [];
  for (const math of document.querySelectorAll('main mjx-container')) {
    for (const el of [math, ...math.querySelectorAll('*')]) {
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') continue;
      const fg = rgba(style.color).slice(0, 3), bg = behind(el);
      const [a, b] = [luminance(fg), luminance(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      if (ratio < 4.5) low.push({ratio: +ratio.toFixed(2), color: style.color, tag: el.tagName});
    }
  }
  return low.sort((x, y) => x.ratio - y.ratio).slice(0, 3);
}
"""


def shared_contrast_problems(browser, server: str, site: Path, page: None = None) -> list[str]:
    """axe on typeset math and highlighted code (their colour contrast is left out page by
    page, see :data:`CONTRAST_SHARED`), every equation of the page typeset: every rule on
    those elements, on the shortest chapter that has both (its other elements have its
    desktop check)."""
    page = min((p for p in page_names() if 'class="highlight' in (site / p).read_text()),
               key=lambda p: (site / p).stat().st_size)
    v = Visit(browser, f"{server}/{page}")
    try:
        v.js(INSPECT, True)
        problems = []
        for what in ("mjx-container", "div.highlight"):
            if not v.js(f"() => document.querySelectorAll('main {what}').length"):
                problems.append(f"{page} has no {what} left to check the contrast of")
        problems += [f"math with a contrast of {m['ratio']} (under 4.5): {m['tag']} in "
                     f"{m['color']}" for m in v.js(MATH_CONTRAST)]
        return problems + [f"{page}: {p}" for p in axe_problems(v.page, shared_only=True)]
    finally:
        v.close()


class KeptContexts:
    """A browser whose contexts the page checks keep, one per viewport: each page opens in a
    fresh tab of its viewport's context, and the pages share its cache and renderer, as a
    reader's pages do (a fresh context per page started a renderer and fetched every script
    again: a twentieth of the checks' time). Nothing a check changes is stored (the dark
    theme is set on the page, not in its storage)."""

    def __init__(self, browser):
        self.browser, self.contexts = browser, {}

    def new_context(self, viewport):
        key = (viewport["width"], viewport["height"])
        if key not in self.contexts:
            self.contexts[key] = self.browser.new_context(viewport=viewport)
        return Tab(self.contexts[key])


class Tab:
    """One tab of a kept context (:class:`KeptContexts`): closing it closes the tab only."""

    def __init__(self, context):
        self.context, self.page = context, None

    def new_page(self):
        self.page = self.context.new_page()
        return self.page

    def close(self):
        if self.page is not None:
            self.page.close()


class PageChecks(Background):
    """The checks of every page as a reader meets it (desktop, dark theme, phone) and of the
    shared colours, in a thread of their own with their own server and browser, started right
    after collection (``tests/conftest.py``), as the JupyterLab walks are: a check mostly waits
    on the browser, so the rest of the suite runs meanwhile. A job is ``(kind, page)``."""

    name = "page-checks"
    limit = timeouts.PAGE_CHECKS
    CHECKS = {"desktop": desktop_problems, "phone": phone_problems,
              "contrast": shared_contrast_problems}
    TESTS = {"test_page_in_browser": "desktop", "test_page_on_a_phone_from_a_file_url": "phone",
             "test_math_and_code_colours_contrast": "contrast"}

    @classmethod
    def job(cls, item) -> tuple[str, str | None]:
        """The check a collected test waits for: (kind, page)."""
        params = getattr(item, "callspec", None)
        return cls.TESTS[item.originalname], params.params["page"] if params else None

    def available(self) -> bool:
        return CHROMIUM is not None

    def default_jobs(self) -> list[tuple[str, str | None]]:
        """Every page's desktop and phone checks, and the shared colours'."""
        return [(kind, page) for page in page_names() for kind in ("desktop", "phone")] + [
            ("contrast", None)]

    @contextlib.contextmanager
    def session(self):
        site = built_site()
        with serving(site) as server, launched() as b:
            kept = KeptContexts(b)
            yield lambda job: self.CHECKS[job[0]](kept, server, site, job[1])

    def describe(self, job) -> str:
        return f"{job[0]} check of {job[1]}"


PAGES = PageChecks()


@pytest.mark.parametrize("page", page_names())
def test_page_in_browser(page):
    """Desktop, light theme, served: nothing requested from another host, no failed request,
    exception or console error; every figure loaded, with alt text; the first screen's math
    typeset soon after the load; every control follows its inputs and no parameter is dead;
    axe finds nothing at :data:`AXE_FAILING` impacts; and, in the dark theme, figures keep
    their light background. (The checks run in :data:`PAGES`' thread; this waits for its.)"""
    problems = PAGES.result(("desktop", page))
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page", page_names())
def test_page_on_a_phone_from_a_file_url(page):
    """At 390 px no equation is cut off, figure text stays legible, controls stay usable; and
    the page works opened straight from disk (``_build/html/<page>``: no server, no network):
    every equation typesets, with no MathJax error, raw TeX or error text left; figures load
    and have alt text; the controls' script runs. Widened to 1280 px, no display equation is
    wider than the text column."""
    problems = PAGES.result(("phone", page))
    assert not problems, f"{page} at 390 px, from a file URL:\n  " + "\n  ".join(problems)


def test_math_and_code_colours_contrast():
    """The colour contrast of typeset math and highlighted code (left out page by page, see
    :data:`CONTRAST_SHARED`), on the shortest chapter that has both, every equation typeset:
    every math element against what is behind it (:data:`MATH_CONTRAST`; axe cannot see
    MathJax's glyphs), and every axe rule on the math and the code."""
    problems = PAGES.result(("contrast", None))
    assert not problems, "\n  ".join(problems)


def chapter_with_controls() -> str:
    return next(p for p in page_names()
                if 'class="explorable"' in (built_site() / p).read_text())


def test_skip_links_lead_to_each_control(server, visit):
    """From the top of the page, a keyboard reaches every control in a few presses."""
    v = visit(f"{server}/{chapter_with_controls()}")
    controls = v.js("() => Array.from(document.querySelectorAll('.explorable'), e => e.id)")
    links = v.js("() => Array.from(document.querySelectorAll('.skip-controls a'),"
                 " a => a.getAttribute('href'))")
    assert links == [f"#{c}" for c in controls]
    v.page.keyboard.press("Tab")  # "Skip to main content"
    v.page.keyboard.press("Tab")  # "Skip to control 1"
    assert v.js("() => document.activeElement.getAttribute('href')") == links[0]
    v.page.keyboard.press("Enter")
    v.page.keyboard.press("Tab")
    inside = v.js("() => document.activeElement.closest('.explorable')?.id || null")
    assert inside == controls[0], "Tab after the skip link does not reach the control's input"


def test_search_results_show_math_as_text(server, visit):
    v = visit(f"{server}/search.html?q=variance")
    v.page.wait_for_selector("#search-results ul.search li p", timeout=timeouts.ms(20))
    summaries = v.js("() => Array.from(document.querySelectorAll("
                     "'#search-results ul.search li p'), p => p.textContent)")
    assert summaries
    for text in summaries:
        for raw in RAW_TEX:
            assert raw not in text, f"raw TeX {raw!r} in a search result: {text}"
    assert v.js("() => bookTexToText('\\\\(\\\\operatorname{Var}(X)\\\\)')") == "Var(X)"


def test_live_code_offline_says_it_needs_a_network(server, visit):
    """Thebe loads from a CDN only on click; offline, the button explains instead of hanging."""
    chapter = next(p for p in page_names() if p != "book/intro.html"
                   and "initThebeSBT" in (built_site() / p).read_text())
    v = visit(f"{server}/{chapter}")
    v.js("() => document.querySelector('[onclick*=\"initThebeSBT\"]').click()")
    v.page.wait_for_function(
        "() => (document.querySelector('.thebe-launch-button') || {}).textContent"
        "?.includes('internet connection')", timeout=timeouts.ms(15))
    assert not v.errors


def test_every_page_was_checked(server):
    """The pages the browser visits are the book's pages, and the site lists nothing else."""
    site = built_site()
    for page in page_names():
        assert (site / page).exists(), f"{page} was not built"


def solid_control():
    """A control whose frames are solid primaries, red, green, blue, red, ... (a test card)."""
    import matplotlib

    matplotlib.use("Agg")
    from lib.widgets import Control, Slider

    colours = ["#ff0000", "#00ff00", "#0000ff"]

    def setup(fig):
        ax = fig.add_axes([0, 0, 1, 1])
        ax.set_axis_off()
        return {"fig": fig}

    def update(artists, k):
        artists["fig"].set_facecolor(colours[int(k) % 3])

    return Control(setup, update, [Slider("k", tuple(range(7)), 0, integer=True)],
                   alt="solid frame {k}", figsize=(7.2, 1.0))


@pytest.mark.parametrize("scale", [1, 2])
def test_sprite_frames_do_not_bleed(browser, scale):
    """Every frame shows only its own pixels, at any width and pixel density: a frame of one
    primary colour, seen through its box, holds no trace of the next or previous frame."""
    import io

    import numpy as np
    from PIL import Image

    control = solid_control()
    page_html = f"<!doctype html><html><body><main>{control.explorable_html()}</main></body>"
    for width in (390, 600, 1280):
        context = browser.new_context(viewport={"width": width, "height": 600},
                                      device_scale_factor=scale)
        page = context.new_page()
        page.set_default_timeout(timeouts.ms(timeouts.PAGE_ACTION))
        page.set_content(page_html)
        slider = page.locator("input[type=range]")
        for k in range(7):
            slider.evaluate("(el, k) => { el.value = String(k);"
                            " el.dispatchEvent(new Event('input')); }", k)
            box = page.evaluate("""() => {  // the part of the box on screen (it may scroll)
              const v = document.querySelector('.explorable-view').getBoundingClientRect();
              const f = document.querySelector('.explorable-figure').getBoundingClientRect();
              const x = Math.max(v.left, f.left), y = v.top;
              return {x: x, y: y, width: Math.min(v.right, f.right) - x, height: v.height};
            }""")
            shot = page.screenshot(clip=box)
            pixels = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB")).astype(int)
            own, others = k % 3, [c for c in range(3) if c != k % 3]
            # a blend with the white page at the box's edge keeps the other two channels
            # equal; a neighbouring frame (another primary) would not
            assert (pixels[..., own] >= 250).all(), (width, scale, k)
            assert np.abs(pixels[..., others[0]] - pixels[..., others[1]]).max() <= 3, \
                (width, scale, k)
            inner = pixels[2:-2, 2:-2]
            assert (inner[..., others[0]] <= 3).all(), (width, scale, k)
        context.close()


def test_sprite_arithmetic_is_the_same_in_the_browser_and_in_python(browser):
    """``sprite.js`` (both faces' frame arithmetic) and its Python twin, ``sprite_rows`` (the
    page's first paint), agree on every frame of sprites of several shapes."""
    from lib.widgets.live import _asset
    from lib.widgets.sprites import sprite_rows

    page = browser.new_page()
    try:
        page.add_script_tag(content=_asset("sprite.js"))
        for geometry in ({"height": 10, "pad": 1, "perSprite": 3, "count": 7},
                         {"height": 324, "pad": 2, "perSprite": 34, "count": 80},
                         {"height": 360, "pad": 2, "perSprite": 1, "count": 4}):
            for k in range(geometry["count"]):
                js = page.evaluate("([g, k]) => spriteRows(g, k)", [geometry, k])
                row, rows = sprite_rows(geometry, k)
                assert (js["sprite"], js["row"], js["rows"]) == \
                    (k // geometry["perSprite"], row, rows), (geometry, k)
        sizes = [3, 2, 4]
        for parts in ([0, 0, 0], [2, 1, 3], [1, 0, 2]):
            expected = (parts[0] * 2 + parts[1]) * 4 + parts[2]
            assert page.evaluate("([s, p]) => stateNumber(s, p)", [sizes, parts]) == expected
    finally:
        page.close()


TABLET = {"width": 820, "height": 1180}
# Where a sidebar's links are on screen: how many of its links lie inside the viewport.
LINKS_ON_SCREEN = r"""
(selector) => Array.from(document.querySelectorAll(selector + ' a')).filter(a => {
  const r = a.getBoundingClientRect();
  return r.width > 0 && r.left >= 0 && r.right <= innerWidth && r.top < innerHeight
    && getComputedStyle(a).visibility !== 'hidden';
}).length
"""


@pytest.mark.parametrize("viewport", [PHONE, TABLET], ids=["phone", "tablet"])
def test_chapter_and_section_drawers_open_on_narrow_screens(server, visit, viewport):
    """Below 992 px the sidebars are drawers: the visible ☰ button opens the chapter list, the
    ☷ button the section list, and Escape closes them (a reader's only other way between
    chapters is Prev/Next at the foot of a very long page)."""
    page = next(p for p in page_names() if p.startswith("book/") and "masks" in p)
    v = visit(f"{server}/{page}", viewport)
    for toggle, sidebar, what in ((".primary-toggle", ".bd-sidebar-primary", "chapter list"),
                                  (".secondary-toggle", ".bd-sidebar-secondary", "sections")):
        assert v.js(LINKS_ON_SCREEN, sidebar) == 0, f"the {what} is open before any press"
        v.page.locator(f"{toggle}:visible").first.click()
        v.page.wait_for_function(f"() => ({LINKS_ON_SCREEN})('{sidebar}') >= 5",
                                 timeout=timeouts.ms(timeouts.PAGE_ACTION))
        v.page.keyboard.press("Escape")
        v.page.wait_for_function(f"() => ({LINKS_ON_SCREEN})('{sidebar}') == 0",
                                 timeout=timeouts.ms(timeouts.PAGE_ACTION))


def test_desktop_has_one_search_box_and_no_empty_header(server, visit):
    """At 1280 px the chapter list is the sidebar itself: no empty header bar above it and one
    search box, not two."""
    v = visit(f"{server}/book/masks.html")
    header = v.js("() => document.querySelector('.bd-header')?.getBoundingClientRect().height"
                  " ?? 0")
    assert header == 0, f"an empty {header:.0f} px header bar sits above the page"
    boxes = v.js("() => Array.from(document.querySelectorAll('input[type=search], "
                 ".search-button-field')).filter(e => e.offsetParent !== null).length")
    assert boxes <= 1, f"{boxes} search boxes on one page"
    assert v.js(LINKS_ON_SCREEN, ".bd-sidebar-primary") >= 5, "no chapter list on the desktop"


# The preview open now: its text, and whether the link points a screen reader at it.
PREVIEW = r"""
(link) => {
  const tip = document.querySelector('[data-tippy-root]');
  const a = document.querySelector(link);
  return tip ? {text: tip.innerText, described: a.getAttribute('aria-describedby') || '',
                tipId: tip.id} : null;
}
"""


def settle(locator, still: int = 10) -> None:
    """Wait until ``locator`` stays where it is for ``still`` animation frames in a row (lazy
    typesetting reflows the text around it: a hover before that lands beside the link)."""
    locator.evaluate("""(el, still) => new Promise(resolve => {
      let last = '', same = 0;
      const step = () => {
        const r = el.getBoundingClientRect(), now = `${r.x},${r.y}`;
        same = now === last ? same + 1 : 0;
        last = now;
        if (same >= still) { resolve(); } else { requestAnimationFrame(step); }
      };
      requestAnimationFrame(step);
    })""", still)


@pytest.mark.parametrize("view", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_terms_and_references_preview_on_hover_and_keyboard_focus(server, visit, view):
    """A glossary term shows its entry, and a reference to an equation shows the equation, in
    place: on hover, and on keyboard focus (sphinx-tippy, served by the site itself), with the
    link described by the preview for screen readers."""
    v = visit(f"{server}/book/intro.html", view)
    term = "a.reference.internal[href*='glossary.html#term-']"
    assert v.page.locator(term).count(), "the landing page links no glossary term"
    v.page.locator(term).first.focus()
    v.page.wait_for_function(f"() => ({PREVIEW})(\"{term}\") !== null",
                             timeout=timeouts.ms(timeouts.PAGE_ACTION))
    seen = v.js(PREVIEW, term)
    assert "each token on its own" in seen["text"], seen
    assert seen["described"] and seen["described"] in seen["tipId"], seen
    v.page.keyboard.press("Escape")
    v = visit(f"{server}/book/masks.html", view)
    ref = "article a.reference.internal[href^='#equation-']"
    assert v.page.locator(ref).count(), "masks.html refers to no equation"
    v.page.locator(ref).first.scroll_into_view_if_needed()
    settle(v.page.locator(ref).first)  # the equations around it typeset as they come into view
    v.page.locator(ref).first.hover()
    v.page.wait_for_function(f"() => ({PREVIEW})(\"{ref}\") !== null",
                             timeout=timeouts.ms(timeouts.PAGE_ACTION))
    assert v.page.locator("[data-tippy-root] mjx-container").count(), \
        "the equation's preview shows no typeset equation"
