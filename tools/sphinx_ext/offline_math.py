"""Sphinx extension: the site's math typesets with no internet.

MathJax 3 is self-hosted: the files come from the ``django-static-mathjax`` wheel (MathJax
3.2.2's ``es5`` build, pinned in ``requirements.txt``; it has no Django dependency), are
copied to ``_static/mathjax/`` and ``mathjax_path`` points at them. Only the components a
page needs are loaded (TeX in, CommonHTML out, hidden MathML for screen readers, no menu),
and typesetting is lazy: an equation is typeset when it comes near the screen, so the first
screen's math is ready soon after the load.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: Where MathJax goes, relative to the site's ``_static`` folder.
MATHJAX_DIR = "mathjax"


MATHJAX_ENTRY = "startup.js"


#: The components the entry loads (MathJax's own names): TeX input with its common packages,
#: CommonHTML output, lazy typesetting, and hidden MathML that screen readers read.
MATHJAX_LOAD = ["input/tex", "output/chtml", "ui/lazy", "a11y/assistive-mml"]


#: Parts of MathJax's ``es5`` build copied to the site: the entry, those components, what they
#: load at run time (the core, TeX extensions by autoload, the CHTML fonts).
MATHJAX_PARTS = ("startup.js", "core.js", "input/tex.js", "input/tex", "output/chtml.js",
                 "output/chtml", "ui/lazy.js", "a11y/assistive-mml.js")


def mathjax_source() -> Path:
    """The ``es5`` folder of the MathJax copy installed with ``django-static-mathjax``."""
    import mathjax  # the django-static-mathjax wheel's package: static files only

    path = Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5"
    if not (path / MATHJAX_ENTRY).exists():
        raise FileNotFoundError(f"MathJax not found at {path}: pip install -r requirements.txt")
    return path


def set_mathjax_path(app, config):
    if config.mathjax_path.startswith(("http://", "https://")):
        config.mathjax_path = f"{MATHJAX_DIR}/{MATHJAX_ENTRY}"


def configure_mathjax(app):
    """Load MathJax's components one by one (no menu, no MathML input) and typeset lazily.
    Runs after myst-nb has set its own MathJax options, and keeps them."""
    settings = dict(app.config.mathjax3_config or {})
    loader = dict(settings.get("loader", {}))
    loader["load"] = [*loader.get("load", []), *MATHJAX_LOAD]
    settings["loader"] = loader
    app.config.mathjax3_config = settings


def copy_mathjax(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    src = mathjax_source()
    dest = Path(app.outdir) / "_static" / MATHJAX_DIR
    for part in MATHJAX_PARTS:
        if (src / part).is_dir():
            shutil.copytree(src / part, dest / part, dirs_exist_ok=True)
        else:
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / part, dest / part)
    licence = src.parent / "LICENSE"
    if licence.exists():
        shutil.copy2(licence, dest / "LICENSE")


def setup(app):
    app.connect("config-inited", set_mathjax_path)
    app.connect("builder-inited", configure_mathjax, priority=900)
    app.connect("build-finished", copy_mathjax)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
