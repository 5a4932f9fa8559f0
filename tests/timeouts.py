"""Every wait of the suite in one place, scaled to how busy the machine is.

A wait that passes on a quiet machine should not fail on a busy one (a second ``make test``
alongside, the emulated-CPU runs, a JupyterLab and a browser on two cores). Each limit is
written here at its quiet-machine size and multiplied, when it is used, by :func:`scale`: the
one-minute load average per core (at least 1, at most 6), or ``TEST_TIMEOUT_SCALE`` if set.
The load average lags (at the start of a run the suite's own processes have not shown in it
yet), so the long waits of the JupyterLab walks limit a stall, not the whole: their clock
restarts whenever one more cell renders or runs.
"""

from __future__ import annotations

import os

#: Quiet-machine limits, in seconds.
PAGE_ACTION = 30  # a Playwright action or wait (screenshot, selector)
PAGE_CHECKS = 600  # every page check of the site up to a page's
LAB_OPEN = 90  # a chapter opened in JupyterLab; its next Markdown cell rendered; its kernel idle
LAB_RUN_ALL = 120  # Run All in JupyterLab: the next code cell finished
LAB_WALK = 900  # every walk up to a chapter's
LAB_CONTROLS = 30  # a chapter's live controls drawn after Run All
LAB_SAVE = 15  # a save from JupyterLab
HTTP = 30  # one request to the Jupyter server


def scale() -> float:
    """How much longer than on a quiet machine a wait may take now."""
    if os.environ.get("TEST_TIMEOUT_SCALE"):
        return float(os.environ["TEST_TIMEOUT_SCALE"])
    cores = len(os.sched_getaffinity(0)) or 1
    return min(6.0, max(1.0, os.getloadavg()[0] / cores))


def seconds(limit: float) -> float:
    """``limit`` (quiet-machine seconds) scaled to the machine's load now."""
    return limit * scale()


def ms(limit: float) -> float:
    """:func:`seconds` in milliseconds, as Playwright takes them."""
    return seconds(limit) * 1000
