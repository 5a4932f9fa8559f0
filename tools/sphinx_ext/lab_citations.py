"""Citations written as links to ``references.bib``, rendered as sphinxcontrib-bibtex citations.

jupyterlab-myst (JupyterLab's MyST renderer) reads no bibliography: every ``{cite:p}`` shows
there as "Citation Not Found". So the chapters write a citation as a Markdown link whose
text is the author and year and whose target is the entry in ``references.bib``
(``tools/lab_compat.py`` writes them)::

    ([Vaswani et al., 2017](../references.bib#vaswani2017attention))      parenthetical
    ([Johnson and Lindenstrauss, 1984](../references.bib#johnson1984extensions);
     [Vershynin, 2018](../references.bib#vershynin2018high))                  several keys
    [Blitzstein and Hwang, 2019](../references.bib#blitzstein2019introduction)   narrative

JupyterLab shows the text, and the link opens the entry. Before Sphinx parses a page, this
extension turns the same links back into ``{cite:p}`key1,key2``` and ``{cite:t}`key```, so
the site renders exactly the citations and bibliography it rendered from those roles.
"""

from __future__ import annotations

import re

LINK = r"\[[^\[\]]+\]\((?:\.\./)*references\.bib#(?P<key>[\w:.-]+)\)"
ONE = re.compile(LINK)
PARENTHETICAL = re.compile(r"\((?P<links>" + LINK.replace("?P<key>", "?:") + r"(?:;\s*"
                           + LINK.replace("?P<key>", "?:") + r")*)\)")


def to_roles(text: str) -> str:
    """MyST text with every ``references.bib`` link citation turned into its ``{cite}`` role."""
    text = PARENTHETICAL.sub(
        lambda m: "{cite:p}`" + ",".join(ONE.findall(m["links"])) + "`", text)
    return ONE.sub(lambda m: "{cite:t}`" + m["key"] + "`", text)


def _source_read(app, docname, source):
    source[0] = to_roles(source[0])


def setup(app):
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
