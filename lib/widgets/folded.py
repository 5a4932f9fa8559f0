"""Folded output: what an exercise's solution prints, behind a disclosure triangle."""

from __future__ import annotations

import contextlib
import html
import io

__all__ = ["folded_output"]


@contextlib.contextmanager
def folded_output(summary: str = "What the solution prints"):
    """Show what the block prints folded, under ``summary``, opened on request.

    For the cell of an exercise's solution: JupyterLab's Run All shows the outputs of every
    cell it runs, collapsed or not, which would print the answer under the closed solution.
    The output is a ``<details>`` element (``text/html``; its summary keeps the disclosure
    triangle, which JupyterLab's styles remove) and the printed text (``text/plain``,
    for other front ends and the print edition). The site opens it, since there the whole cell
    is already behind a toggle. If the block raises, what it printed is printed as usual;
    outside IPython (a plain ``python``), it is printed as usual too:

    >>> with folded_output():
    ...     print("cos θ = 0.302")
    cos θ = 0.302
    """
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            yield
    except BaseException:
        print(buf.getvalue(), end="")
        raise
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display

    text = buf.getvalue()
    if not InteractiveShell.initialized():
        print(text, end="")
        return
    display({"text/plain": text,
             "text/html": f'<details class="folded-output"><summary style="display:list-item;'
                          f'list-style:revert;cursor:pointer">{html.escape(summary)}</summary>'
                          f"<pre>{html.escape(text)}</pre></details>"}, raw=True)
