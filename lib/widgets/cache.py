"""A control's packed frames kept on disk, keyed by the code that drew them.

Drawing every state of a control and packing the frames (:meth:`Control.packed`) is most of
a chapter's run time, and a chapter runs many times with the same code: the site's build, the
test suite's main and emulated-CPU runs, a JupyterLab session. In a Jupyter kernel the frames
are a function of the code the kernel has run, because every random draw of the book is
seeded in the cell that uses it. So the packed frames are stored under a key that hashes

* every input the kernel has run so far, in order (IPython's history of the session, which
  includes the cell being run);
* every file of ``lib`` and the versions of Python, numpy, matplotlib and Pillow;
* the control's own description (its parameters, alt text, figure size and dpi).

Change a cell, re-run cells in another order, edit ``lib`` or upgrade matplotlib, and the key
changes: the frames are drawn again. Outside IPython (a script, a doctest, a test that runs
one cell) there is no history, and nothing is cached. A control drawn from measurements (not
from seeded computation) passes ``cache=False``.

Where: ``$ATTENTION_NOTES_FRAME_CACHE`` if set (``off`` turns the cache off), else
``_build/.frame-cache`` of the checkout ``lib`` sits in (``make clean`` empties it). Writes
are atomic (a temporary file, then a rename), so runs side by side share the folder; it keeps
the :data:`MAX_ENTRIES` newest entries.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import platform
import tempfile
from pathlib import Path

__all__: list[str] = []

#: Entries kept (the oldest, by last use, are removed beyond this).
MAX_ENTRIES = 256
ENV = "ATTENTION_NOTES_FRAME_CACHE"
LIB = Path(__file__).resolve().parents[1]


def folder() -> Path | None:
    """The cache's folder, or None when the cache is off or there is nowhere to put it."""
    setting = os.environ.get(ENV, "")
    if setting.lower() in ("off", "0", "no", "false"):
        return None
    if setting:
        return Path(setting)
    root = LIB.parent
    return root / "_build" / ".frame-cache" if (root / "_config.yml").exists() else None


def environment_digest(lib: Path = LIB) -> str:
    """Every file of ``lib`` (path and bytes) and the versions that draw and pack frames: the
    part of a frame's key that is not the kernel's history. ``tools/execute.py`` keys the
    site's execution cache on it too (a chapter prints what ``lib`` computes)."""
    import matplotlib
    import numpy
    import PIL

    h = hashlib.sha256()
    for path in sorted(p for p in lib.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(lib)).encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(f"{platform.python_version()} {numpy.__version__} {matplotlib.__version__} "
             f"{PIL.__version__}".encode())
    return h.hexdigest()


#: :func:`environment_digest` of this ``lib``, computed once per process.
_environment_digest = functools.cache(environment_digest)


def _history() -> list[str] | None:
    """The inputs this IPython session has run, or None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return None
    shell = get_ipython()
    if shell is None or getattr(shell, "history_manager", None) is None:
        return None
    return list(shell.history_manager.input_hist_parsed)


def key(description: str) -> str | None:
    """The cache key of a control described by ``description``, drawn now; None outside
    IPython."""
    history = _history()
    if history is None:
        return None
    h = hashlib.sha256(_environment_digest().encode())
    h.update(json.dumps(history).encode())
    h.update(description.encode())
    return h.hexdigest()


def load(entry: str | None) -> dict | None:
    """The packed frames stored under ``entry``, or None (no entry, no cache, unreadable)."""
    where = folder()
    if entry is None or where is None:
        return None
    path = where / f"{entry}.pickle"
    try:
        with path.open("rb") as f:
            packed = pickle.load(f)
        os.utime(path)  # last use, for pruning
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
        return None
    return packed


def store(entry: str | None, packed: dict) -> None:
    """Keep ``packed`` under ``entry`` (atomically); prune the folder to :data:`MAX_ENTRIES`.
    A cache that cannot be written (a read-only checkout) is skipped silently."""
    where = folder()
    if entry is None or where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(packed, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, where / f"{entry}.pickle")
        entries = sorted(where.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[MAX_ENTRIES:]:
            old.unlink(missing_ok=True)
    except OSError:
        return
