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

Glossary terms the same way: ``{term}`one-hot``` shows in JupyterLab as an unresolved role,
so a chapter writes ``[one-hot](glossary.md#term-one-hot)`` (``tools/lab_compat.py`` does),
a link that opens the glossary there, and this extension turns it back into
``{term}`one-hot <one-hot>``` for the site, whose hover preview shows the entry.
"""

from __future__ import annotations

import re
from pathlib import Path

LINK = r"\[[^\[\]]+\]\((?:\.\./)*references\.bib#(?P<key>[\w:.-]+)\)"
ONE = re.compile(LINK)
PARENTHETICAL = re.compile(r"\((?P<links>" + LINK.replace("?P<key>", "?:") + r"(?:;\s*"
                           + LINK.replace("?P<key>", "?:") + r")*)\)")


def to_roles(text: str) -> str:
    """MyST text with every ``references.bib`` link citation turned into its ``{cite}`` role."""
    text = PARENTHETICAL.sub(
        lambda m: "{cite:p}`" + ",".join(ONE.findall(m["links"])) + "`", text)
    return ONE.sub(lambda m: "{cite:t}`" + m["key"] + "`", text)


GLOSSARY = Path(__file__).resolve().parents[2] / "book" / "glossary.md"
TERM_LINK = re.compile(r"\[(?P<text>[^\[\]]+)\]\((?:\./)?glossary\.md#term-(?P<slug>[\w-]+)\)")


def slug(term: str) -> str:
    """The anchor of a glossary term in a link: ``KV cache`` → ``kv-cache``."""
    return re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def glossary_terms(path: Path = GLOSSARY) -> dict[str, str]:
    """slug → term, for every term of the ``{glossary}`` block of ``book/glossary.md``."""
    text = path.read_text(encoding="utf-8")
    block = re.search(r"```\{glossary\}\n(.*?)\n```", text, re.DOTALL)
    if block is None:
        raise ValueError(f"{path}: no {{glossary}} block")
    terms = [line.strip() for line in block[1].splitlines()
             if line.strip() and not line.startswith((" ", "\t"))]
    return {slug(term): term for term in terms}


def terms_to_roles(text: str, terms: dict[str, str]) -> str:
    """MyST text with every glossary link turned into its ``{term}`` role.

    >>> terms_to_roles("a [one-hot](glossary.md#term-one-hot) vector", {"one-hot": "one-hot"})
    'a {term}`one-hot <one-hot>` vector'
    """
    def role(match: re.Match) -> str:
        term = terms.get(match["slug"])
        if term is None:
            raise ValueError(f"{match[0]}: no such term in book/glossary.md")
        return "{term}`" + match["text"] + " <" + term + ">`"

    return TERM_LINK.sub(role, text)


def _source_read(app, docname, source):
    source[0] = to_roles(source[0])
    if TERM_LINK.search(source[0]):
        source[0] = terms_to_roles(source[0], glossary_terms())


def setup(app):
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
