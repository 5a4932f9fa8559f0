"""Screenshots for people to look at, not checks: written only when asked.

``make screenshots`` (``SCREENSHOTS=1``) runs the page checks of ``tests/test_browser.py`` and
the walks of ``tests/test_jupyterlab.py`` with them: each page's first screen (desktop, dark,
phone) and its controls, each chapter's first and last screens in JupyterLab, a control and a
folded solution, into ``tests/artifacts/``. Nothing asserts on them, so ``make test`` leaves
them out (encoding them is a tenth of the page checks' time).
"""

from __future__ import annotations

import os


def wanted() -> bool:
    """Whether this run writes screenshots (``SCREENSHOTS`` set and not ``0``)."""
    return os.environ.get("SCREENSHOTS", "0") not in ("", "0")
