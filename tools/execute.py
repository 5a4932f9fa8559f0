"""Execute the book's chapters side by side, into the cache the site's build reads.

Jupyter Book executes the notebooks of a build one after another. It keeps what it executed in
a jupyter-cache folder (``_build/.jupyter_cache``), and uses a cached notebook whose code
cells are unchanged instead of executing it again. jupyter-cache itself can execute several
notebooks at once. So ``make html`` runs this first:

1. every chapter of ``_toc.yml`` that has code cells is staged in that cache's project, read
   by myst-nb's own reader (the ``myst_nb_md`` plugin), so that it hashes as the build's copy;
2. those whose code is not cached yet are executed by jupyter-cache's ``local-parallel``
   executor (one process per core), in the chapter's folder, with the timeout of
   ``_config.yml``;
3. the build then finds every chapter cached, and executes none.

jupyter-cache knows a chapter by its code cells only, and the chapters print what ``lib``
computes: so the cache also records a digest of ``lib`` and of the versions that compute and
draw (``lib.widgets.cache.environment_digest``, the frame cache's key), and when that changes
every cached chapter is executed again (a site that showed figures of an older ``lib`` would
pass its own checks). A chapter executed here has its source's time touched, so that the build
reads it again: Sphinx reads only the sources it sees changed.

A chapter that fails here is left for the build, which executes it again and reports the
error with its traceback as usual. Usage: ``.venv/bin/python tools/execute.py`` (from anywhere).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

import yaml
from jupyter_cache import get_cache
from jupyter_cache.executors import load_executor
from myst_nb.core.read import is_myst_markdown_notebook, myst_nb_reader_plugin

from lib.widgets.cache import environment_digest

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
READER = {"type": "plugin", "name": "myst_nb_md"}
#: The digest of ``lib`` the cached chapters were executed with (``environment_digest``).
LIB_RECORD = CACHE / "lib-digest.txt"


def toc_files() -> list[Path]:
    """Every document of ``_toc.yml``, in order, as the path of its ``.md``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [ROOT / f"{name}.md" for name in files]


def notebooks() -> list[Path]:
    """The documents the build executes: MyST notebooks with at least one code cell."""
    found = []
    for path in toc_files():
        text = path.read_text(encoding="utf8")
        if is_myst_markdown_notebook(text) and any(
                cell.cell_type == "code" for cell in myst_nb_reader_plugin(str(path)).cells):
            found.append(path)
    return found


def main() -> int:
    config = yaml.safe_load((ROOT / "_config.yml").read_text()).get("execute", {})
    if config.get("execute_notebooks", "auto") not in ("cache", "auto"):
        return 0
    timeout = int(config.get("timeout", 30))
    logger = logging.getLogger("execute")
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    digest = environment_digest()
    if CACHE.exists() and (not LIB_RECORD.exists() or LIB_RECORD.read_text() != digest):
        get_cache(str(CACHE)).clear_cache()  # executed with another lib, or before the record
    cache = get_cache(str(CACHE))
    stale = []
    for path in notebooks():
        record = cache.add_nb_to_project(str(path), read_data=READER)
        nb = myst_nb_reader_plugin(str(path))
        try:
            cache.match_cache_notebook(nb)
        except KeyError:
            stale.append(record.pk)
            # Sphinx reads again only the sources it sees changed: a chapter executed again
            # (its lib changed, not its text) must be read again, or its page keeps the old
            # outputs
            os.utime(path)
    LIB_RECORD.write_text(digest)
    if not stale:
        print("tools/execute.py: every chapter is cached")
        return 0
    start = time.perf_counter()
    # the site serves each wide figure's narrow drawing too (lib.widgets.narrow; the
    # kernels inherit this)
    os.environ["LIB_NARROW_FIGURES"] = "1"
    executor = load_executor("local-parallel", cache, logger=logger)
    result = executor.run_and_cache(filter_pks=stale, timeout=timeout, allow_errors=False)
    names = ", ".join(Path(uri).stem for uri in result.succeeded)
    print(f"tools/execute.py: executed {len(result.succeeded)} chapters side by side in "
          f"{time.perf_counter() - start:.0f} s ({names})")
    for uri in result.excepted + result.errored:
        print(f"tools/execute.py: {Path(uri).relative_to(ROOT)} failed; the build will run it "
              "again and show the error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
