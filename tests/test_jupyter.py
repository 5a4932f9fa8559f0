"""Chapters open as notebooks in a real Jupyter server, and run in its kernel.

This is what a local learner (``.venv/bin/jupyter lab``) and a Binder user get. The test runs
``postBuild`` (what Binder runs) into a private Jupyter config folder, starts the project's own
``jupyter server`` on 127.0.0.1 with a random free port and a token, and then, as JupyterLab
would:

* asks the settings API which viewer opens Markdown: jupytext's notebook, set by ``postBuild``;
* checks that the jupytext and jupyterlab-myst front-end extensions are installed and enabled;
* opens every chapter through the contents API as a notebook (jupytext's contents manager
  turns the ``.md`` into cells);
* starts a kernel session on it and executes every code cell over the kernel's websocket,
  failing on any error output or on a cell that does not finish within its timeout.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.nbharness import ROOT, chapter_paths, read_chapter

START_TIMEOUT = 60
CELL_TIMEOUT = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, config_dir: Path):
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config_dir),
                   JUPYTER_RUNTIME_DIR=str(config_dir / "runtime"),
                   JUPYTER_DATA_DIR=str(config_dir / "data"),
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        self.log = open(config_dir / "server.log", "w")
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("jupyter-server")), "--no-browser",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={ROOT}"]
            + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
            env=env, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                self.get("/api/status")
                break
            except (urllib.error.URLError, ConnectionError) as err:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("jupyter server did not start:\n"
                                       + (config_dir / "server.log").read_text()[-3000:]
                                       ) from err
                time.sleep(0.3)

    def request(self, method, path, body=None, raw=False):
        req = urllib.request.Request(
            self.base + path, method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}",
                     "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            data = resp.read().decode()
        return data if raw else (json.loads(data) if data else None)

    def get(self, path, raw=False):
        return self.request("GET", path, raw=raw)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="jupyter-") as tmp:
        config = Path(tmp)
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config),
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        subprocess.run(["bash", str(ROOT / "postBuild")], env=env, check=True, timeout=60)
        srv = Server(config)
        try:
            yield srv
        finally:
            srv.stop()


def test_postbuild_makes_markdown_open_as_a_notebook(server):
    settings = server.get("/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    viewers = settings["schema"]["properties"]["defaultViewers"]["default"]
    assert viewers.get("markdown") == "Jupytext Notebook", viewers
    assert viewers.get("myst") == "Jupytext Notebook", viewers


def test_jupyterlab_has_jupytext_and_myst_extensions(server):
    page = server.get("/lab", raw=True)
    for ext in ("jupyterlab-jupytext", "jupyterlab-myst"):
        assert f'"name": "{ext}"' in page or f'"name":"{ext}"' in page, (
            f"the {ext} JupyterLab extension is not installed or not enabled")


def decode(frame) -> dict:
    """A kernel message from the server's websocket: JSON text, or binary when it carries
    buffers (widget messages): ``nbufs``, ``nbufs`` offsets, the JSON, then the buffers."""
    if isinstance(frame, str):
        return json.loads(frame)
    nbufs = struct.unpack("!I", frame[:4])[0]
    offsets = struct.unpack(f"!{nbufs}I", frame[4:4 + 4 * nbufs])
    end = offsets[1] if nbufs > 1 else len(frame)
    return json.loads(frame[offsets[0]:end].decode("utf-8"))


def run_in_kernel(server, path: str) -> list[str]:
    """Open ``path`` as a notebook session and run its code cells; return the problems."""
    import websocket

    model = server.get("/api/contents/" + urllib.parse.quote(path)
                       + "?type=notebook&content=1")
    assert model["type"] == "notebook", f"{path} opened as {model['type']}, not as a notebook"
    cells = model["content"]["cells"]
    session = server.request("POST", "/api/sessions", {
        "path": path, "name": Path(path).name, "type": "notebook",
        "kernel": {"name": "python3"}})
    kernel = session["kernel"]["id"]
    problems = []
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{server.port}/api/kernels/{kernel}/channels",
        header=[f"Authorization: token {server.token}"], timeout=CELL_TIMEOUT)
    try:
        for num, cell in enumerate(c for c in cells if c["cell_type"] == "code"):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) \
                else cell["source"]
            msg_id = uuid.uuid4().hex
            ws.send(json.dumps({
                "header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex,
                           "msg_type": "execute_request", "version": "5.3"},
                "parent_header": {}, "metadata": {}, "channel": "shell",
                "content": {"code": source, "silent": False, "store_history": True,
                            "user_expressions": {}, "allow_stdin": False,
                            "stop_on_error": True},
            }))
            deadline = time.monotonic() + CELL_TIMEOUT
            reply = idle = False
            while not (reply and idle):
                if time.monotonic() > deadline:
                    problems.append(f"cell {num} did not finish in {CELL_TIMEOUT} s")
                    return problems
                msg = decode(ws.recv())
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = msg["header"]["msg_type"]
                if kind == "error":
                    problems.append(f"cell {num}: {msg['content']['ename']}: "
                                    f"{msg['content']['evalue']}")
                elif kind == "stream" and msg["content"]["name"] == "stderr" \
                        and "Traceback" in msg["content"]["text"]:
                    problems.append(f"cell {num} printed a traceback")
                elif kind == "execute_reply":
                    reply = True
                    if msg["content"]["status"] != "ok":
                        problems.append(f"cell {num}: execute_reply {msg['content']['status']}")
                elif kind == "status" and msg["content"]["execution_state"] == "idle":
                    idle = True
            if problems:
                break
    finally:
        ws.close()
        server.request("DELETE", f"/api/sessions/{session['id']}")
    return problems


@pytest.mark.parametrize("chapter", chapter_paths(), ids=lambda p: p.stem)
def test_chapter_opens_as_notebook_and_runs(server, chapter):
    path = str(chapter.relative_to(ROOT))
    model = server.get("/api/contents/" + urllib.parse.quote(path)
                       + "?type=notebook&content=1")
    assert model["type"] == "notebook"
    nb = model["content"]
    expected = [c.source for c in read_chapter(chapter).cells if c.cell_type == "code"]
    got = [("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
           for c in nb["cells"] if c["cell_type"] == "code"]
    assert got == expected, "the server's notebook has other code cells than the chapter"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    problems = run_in_kernel(server, path)
    assert not problems, f"{path} in a Jupyter kernel:\n  " + "\n  ".join(problems)
