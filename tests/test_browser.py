"""The rendered website in a real browser: headless Chromium, offline, page by page.

Chromium (Debian's ``chromium`` package; CI installs it in ``.ci/run``) loads every page of the
built site from a local HTTP server on 127.0.0.1, with every other host unresolvable (a reader
on a train), and is driven through the DevTools protocol with a small client (no driver, no
browser download). For each page it checks that

* nothing is requested from any other host (MathJax and every script are self-hosted);
* every figure has loaded (``naturalWidth > 0``) and has alt text;
* every equation is typeset by MathJax, and no raw TeX delimiters are left in the text;
* no error text, traceback or JavaScript exception appears;
* every no-kernel control responds: moving a slider or ticking a box swaps the picture;
* in the dark theme, figures keep their light background (axes and labels stay legible).

Every page is also opened straight from disk (``file://``, as from a laptop on a train): math,
figures and controls still work. Screenshots of each page, in the light and dark themes, are
written to ``tests/artifacts/``.
"""

from __future__ import annotations

import base64
import functools
import http.server
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

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


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Browser:
    """A headless Chromium and one page, spoken to over the DevTools protocol."""

    def __init__(self, timeout=60):
        import websocket  # websocket-client, in requirements.txt

        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--hide-scrollbars",
             # offline: every host but the local server is unresolvable
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
             "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not start")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        import urllib.request

        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=10))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=timeout,
                                              suppress_origin=True)
        self.ids = itertools.count(1)
        self.events: list[dict] = []
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")

    def send(self, method, **params):
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)
        raise TimeoutError(method)

    def wait_event(self, method, timeout=None, since=0):
        """Wait for an event ``method`` among the events from index ``since`` on."""
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = since
        while time.monotonic() < deadline:
            for msg in self.events[seen:]:
                if msg.get("method") == method:
                    return msg
            seen = len(self.events)
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(method)

    def js(self, expression, await_promise=False):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=await_promise)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def goto(self, url):
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", since=0)

    def screenshot(self, path: Path, tile=6000) -> list[Path]:
        """The whole page as PNGs of at most ``tile`` CSS pixels high: path, path-2, ..."""
        metrics = self.send("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        height = int(size["height"])
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob(f"{path.stem}-*.png"):
            old.unlink()
        paths = []
        for num, top in enumerate(range(0, height, tile), start=1):
            shot = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                             clip={"x": 0, "y": top, "width": 1280,
                                   "height": min(tile, height - top), "scale": 1})
            out = path if num == 1 else path.with_name(f"{path.stem}-{num}.png")
            out.write_bytes(base64.b64decode(shot["data"]))
            paths.append(out)
        return paths

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    site = built_site()
    handler = functools.partial(Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


# Runs in the page: waits for MathJax (if the page loaded it) and reports what a reader sees.
INSPECT = r"""
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    if (MathJax.typesetPromise) { await MathJax.typesetPromise(); }
  }
  const main = document.querySelector('main') || document.body;
  const imgs = Array.from(main.querySelectorAll('img')).filter(i => !i.closest('.navbar-brand'));
  await Promise.all(imgs.map(i => i.decode().catch(() => null)));
  const clone = main.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, .MathJax')
       .forEach(e => e.remove());
  return {
    images: imgs.map(i => ({src: i.src.slice(0, 80), alt: i.alt,
                            ok: i.complete && i.naturalWidth > 0})),
    mathSources: main.querySelectorAll('span.math, div.math').length,
    typeset: Array.from(main.querySelectorAll('span.math, div.math'))
                  .filter(e => e.querySelector('mjx-container')).length,
    mathjaxErrors: main.querySelectorAll('mjx-merror, [data-mjx-error]').length,
    hasMathJax: !!window.MathJax,
    text: clone.innerText,
    explorables: main.querySelectorAll('.explorable').length,
  };
})()
"""

# Runs in the page: moves every control of every explorable through all its values and reports
# whether the picture (and its alt text) follows, and whether each parameter changes the picture
# for some setting of the others (a parameter that never does is a dead control).
EXPLORE = r"""
(() => {
  const results = [];
  document.querySelectorAll('.explorable').forEach((root, n) => {
    const img = root.querySelector('img');
    const data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
    const keys = Object.keys(data.frames);
    root.querySelectorAll('[data-param]').forEach((el) => {
      const p = +el.dataset.param;
      const count = el.type === 'checkbox' ? 2 : el.type === 'range' ? (+el.max + 1)
                                                                     : el.options.length;
      const old = el.type === 'checkbox' ? el.checked : el.value;
      const seen = new Set([img.src]);
      let wrong = [];
      for (let v = 0; v < count; v++) {
        if (el.type === 'checkbox') { el.checked = !!v; } else { el.value = String(v); }
        el.dispatchEvent(new Event('input', {bubbles: true}));
        el.dispatchEvent(new Event('change', {bubbles: true}));
        const state = root.dataset.state;
        if (+state.split(',')[p] !== v || img.src !== data.frames[state] ||
            img.alt !== data.alts[state] || !img.alt) { wrong.push(v); }
        seen.add(img.src);
      }
      if (el.type === 'checkbox') { el.checked = old; } else { el.value = old; }
      el.dispatchEvent(new Event('input', {bubbles: true}));
      // does this parameter change the picture anywhere in the grid?
      const effect = keys.some(k => keys.some(j => {
        const a = k.split(','), b = j.split(',');
        return a[p] !== b[p] && a.every((x, i) => i === p || x === b[i]) &&
               data.frames[k] !== data.frames[j];
      }));
      results.push({explorable: n, param: p, type: el.type, values: count,
                    picturesAtDefaults: seen.size, wrong: wrong, effect: effect});
    });
  });
  return results;
})()
"""

# Runs in the page: the colour of each figure's top-left pixel (its own background).
CORNERS = r"""
(() => Array.from(document.querySelectorAll('main img')).filter(i => i.naturalWidth > 0 &&
    !i.closest('.navbar-brand')).map(i => {
  const c = document.createElement('canvas'); c.width = 4; c.height = 4;
  const g = c.getContext('2d'); g.drawImage(i, 0, 0, 4, 4, 0, 0, 4, 4);
  const d = g.getImageData(1, 1, 1, 1).data;
  const bg = getComputedStyle(i).backgroundColor;
  return {src: i.src.slice(0, 60), rgba: Array.from(d), bg: bg};
}))()
"""


def external_requests(events, origin):
    urls = [e["params"]["request"]["url"] for e in events
            if e.get("method") == "Network.requestWillBeSent"]
    return [u for u in urls if not u.startswith((origin, "data:", "blob:", "about:"))]


def js_exceptions(events):
    return [e["params"]["exceptionDetails"].get("exception", {}).get("description")
            or e["params"]["exceptionDetails"].get("text")
            for e in events if e.get("method") == "Runtime.exceptionThrown"]


@pytest.mark.parametrize("page", page_names())
def test_page_in_browser(server, browser, page):
    url = f"{server}/{page}"
    browser.goto(url)
    info = browser.js(INSPECT, await_promise=True)
    name = page.replace("/", "_").removesuffix(".html")

    browser.screenshot(ARTIFACTS / f"{name}-light.png")
    browser.js("document.documentElement.dataset.theme = 'dark';"
               "document.documentElement.dataset.mode = 'dark'; true")
    time.sleep(0.2)
    browser.screenshot(ARTIFACTS / f"{name}-dark.png")
    corners = browser.js(CORNERS)
    browser.js("document.documentElement.dataset.theme = 'light';"
               "document.documentElement.dataset.mode = 'light'; true")

    problems = []
    outside = external_requests(browser.events, server)
    if outside:
        problems.append(f"requests to other hosts (the site must work offline): {outside}")
    exceptions = js_exceptions(browser.events)
    if exceptions:
        problems.append(f"JavaScript exceptions: {exceptions}")
    for img in info["images"]:
        if not img["ok"]:
            problems.append(f"figure did not load: {img['src']}")
        if not img["alt"].strip():
            problems.append(f"figure without alt text: {img['src']}")
    if info["mathSources"]:
        if not info["hasMathJax"]:
            problems.append("the page has math but MathJax did not load")
        elif info["typeset"] != info["mathSources"]:
            problems.append(f"{info['mathSources']} equations, only {info['typeset']} typeset")
    if info["mathjaxErrors"]:
        problems.append(f"{info['mathjaxErrors']} equations failed to typeset (MathJax errors)")
    for raw in ("$$", "\\(", "\\[", "\\begin{", "\\frac"):
        if raw in info["text"]:
            at = info["text"].index(raw)
            problems.append(f"raw TeX {raw!r} in the text: ...{info['text'][at - 60:at + 60]}...")
    for bad in ERROR_TEXT:
        if bad in info["text"]:
            problems.append(f"error text {bad!r} on the page")
    for corner in corners:
        r, g, b, a = corner["rgba"]
        if a > 0 and (r + g + b) / 3 < 150:
            problems.append(f"figure with a dark background in the dark theme: {corner['src']}")

    if info["explorables"]:
        results = browser.js(EXPLORE)
        assert results, "explorable controls without inputs"
        for res in results:
            if res["wrong"]:
                problems.append(f"control shows the wrong picture or alt text: {res}")
            if not res["effect"]:
                problems.append(f"control never changes the picture (dead control): {res}")
        if not any(res["picturesAtDefaults"] > 1 for res in results):
            problems.append("no control changes the picture from the default view")
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


def test_every_page_was_checked(server):
    """The pages the browser visits are the book's pages, and the site lists nothing else."""
    site = built_site()
    for page in page_names():
        assert (site / page).exists(), f"{page} was not built"


def test_live_code_offline_says_it_needs_a_network(server, browser):
    """Thebe loads from a CDN only on click; offline, the button explains instead of hanging."""
    chapter = next(p for p in page_names() if p != "book/intro.html"
                   and "initThebeSBT" in (built_site() / p).read_text())
    browser.goto(f"{server}/{chapter}")
    # the rocket menu's "Live Code" entry
    browser.js("document.querySelector('[onclick*=\"initThebeSBT\"]').click(); true")
    deadline = time.monotonic() + 15
    text = ""
    while time.monotonic() < deadline:
        text = browser.js("(document.querySelector('.thebe-launch-button') || {}).textContent"
                          " || ''")
        if "internet connection" in text:
            break
        time.sleep(0.2)
    assert "internet connection" in text, f"Live Code button offline shows {text!r}"
    assert not js_exceptions(browser.events)


@pytest.mark.parametrize("page", page_names())
def test_page_from_a_file_url(browser, page):
    """``_build/html/<page>`` opened straight from disk (no server, no network) still typesets
    its math, shows its figures and runs its controls' script."""
    browser.goto((built_site() / page).as_uri())
    info = browser.js(INSPECT, await_promise=True)
    assert not js_exceptions(browser.events), js_exceptions(browser.events)
    assert all(img["ok"] for img in info["images"]), info["images"]
    assert info["typeset"] == info["mathSources"], (
        f"{info['typeset']} of {info['mathSources']} equations typeset from a file URL")
    if info["explorables"]:
        assert not [r for r in browser.js(EXPLORE) if r["wrong"]]
