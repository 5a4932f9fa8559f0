"""Checks that run one after another in a thread of their own, beside the rest of the suite.

The JupyterLab walks (``tests/test_jupyterlab.py``) and the page checks
(``tests/test_browser.py``) mostly wait on a browser, a server and kernels, so they start right
after collection (``tests/conftest.py``) and the rest of the suite runs meanwhile; each test
then waits for its own job's result. A subclass says what its jobs are and opens what they
share (:meth:`Background.session`); this class runs them, keeps their results and waits.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Hashable

from tests import timeouts


class Background:
    #: The thread's name, and the quiet-machine limit (:mod:`tests.timeouts`) for waiting on
    #: every job up to a test's own.
    name = "checks"
    limit = 600.0

    def __init__(self):
        self.results: dict[Hashable, list[str] | BaseException] = {}
        self.jobs: list[Hashable] = []
        self.thread: threading.Thread | None = None
        self.stopping = False

    def available(self) -> bool:
        """Whether the jobs can run here at all (a test skips otherwise)."""
        return True

    def default_jobs(self) -> list[Hashable]:
        raise NotImplementedError

    def session(self) -> contextlib.AbstractContextManager[Callable[[Hashable], list[str]]]:
        """What the jobs (:attr:`jobs`) share, opened once; yields the function that runs one
        job and returns the problems it found."""
        raise NotImplementedError

    def describe(self, job: Hashable) -> str:
        return str(job)

    def start(self, jobs=None) -> None:
        """Start the jobs (default: :meth:`default_jobs`), once."""
        if self.thread is None and self.available():
            self.jobs = jobs = list(self.default_jobs() if jobs is None else jobs)
            self.thread = threading.Thread(target=self._run, args=(jobs,), name=self.name,
                                           daemon=True)
            self.thread.start()

    def _run(self, jobs: list[Hashable]) -> None:
        try:
            with self.session() as run:
                for job in jobs:
                    if self.stopping:
                        break
                    try:
                        self.results[job] = run(job)
                    except Exception as exc:  # this job broke: report it, go on
                        self.results[job] = exc
        except BaseException as exc:  # what the jobs share could not open: each reports it
            for job in jobs:
                self.results.setdefault(job, exc)

    def result(self, job: Hashable) -> list[str]:
        """The problems ``job`` found (raises what broke it)."""
        self.start()
        limit = timeouts.seconds(self.limit)
        deadline = time.monotonic() + limit
        while job not in self.results:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise AssertionError(f"no {self.describe(job)} within {limit:.0f} s")
            time.sleep(0.2)
        found = self.results[job]
        if isinstance(found, BaseException):
            raise found
        return found

    def wait(self) -> None:
        """Wait until the session is open and its first job done (raises what broke the
        session, or that job)."""
        self.start()
        self.result(self.jobs[0])

    def stop(self) -> None:
        """Stop after the current job (a session cut short)."""
        if self.thread is not None and self.thread.is_alive():
            self.stopping = True
            self.thread.join(60)

