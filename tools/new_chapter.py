"""Write a new chapter from the template, and list it in ``_toc.yml`` and on the front door.

Usage (from the project root; ``make chapter NAME=... PART=...`` runs it)::

    .venv/bin/python tools/new_chapter.py softmax-temperature Attention --title "Temperature"

It writes ``book/<name>.md`` in the shape of CONTRIBUTING.md's "The chapter template"
(opening box, a figure and a control on the first screen, a prediction, a derivation in the
open with its folded check, a quoted figure printed by its cell, a citation, summary, levelled
exercises with a solution, Next), appends the chapter to the part ``PART`` of ``_toc.yml`` and
a row to the table of chapters in ``book/intro.md``. ``make chapter`` then writes its reference
outputs (``make references CHAPTER=<name>``); the new chapter passes ``make check
CHAPTER=<name>`` as written, so every later failure is about what you changed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---
"""

TEMPLATE = '''
(sec-{name})=
# {title}

```{{admonition}} In this chapter
:class: chapter-opening

**You will learn**

- to compute the softmax of a short row of scores by hand
- to predict how dividing the scores by a temperature $T$ spreads the weights
- to check a derivation in the open against `lib`

**You need** {{doc}}`Expectation and Variance <expectation-variance>` (the softmax and its
saturation).

**Core path** about 2 minutes of reading.
```

(sec-{name}-picture)=
## The picture first

This chapter was written by `tools/new_chapter.py`: replace its text and cells with your own,
keeping the shape (CONTRIBUTING.md, "The chapter template"). Four scores, $z = (2, 1, 0.5, -1)$,
go into a softmax.

```{{code-cell}} ipython3
:tags: [hide-input]

import matplotlib.pyplot as plt
import numpy as np

import lib
from lib.plotting import use_house_style
from lib.widgets import Control, Slider, folded_output

use_house_style()
```

```{{admonition}} Predict, then run
:class: predict

Which score gets the largest weight, and is that weight above or below one half?
```

```{{code-cell}} ipython3
z = np.array([2.0, 1.0, 0.5, -1.0])  # the running example: four scores
p = lib.softmax(z)
print(f"largest weight at T = 1: {{p.max():.3f}}")
```

The first key takes 0.609 of the weight; the bars show all four. Move the temperature and
watch them spread.

```{{code-cell}} ipython3
---
mystnb:
  figure:
    caption: The softmax weights of the four scores at temperature 1.
    name: fig-{name}-weights
  image:
    alt: Four bars; the first score gets the largest weight, the last almost none.
tags: [hide-input]
---
fig, ax = plt.subplots(figsize=(5, 2.6))
ax.bar(range(len(z)), p)
ax.set(xlabel="key j", ylabel="weight p_j")
plt.show()
```

```{{code-cell}} ipython3
:tags: [hide-input]

def setup_weights(fig):
    ax = fig.subplots()
    bars = ax.bar(range(len(z)), lib.softmax(z))
    ax.set(xlabel="key j", ylabel="weight p_j", ylim=(0, 1))
    fig.tight_layout()  # keeps the axis labels inside the frame
    return {{"bars": bars}}


def update_weights(art, T):
    for bar, p in zip(art["bars"], lib.softmax(z / T), strict=True):
        bar.set_height(p)


weights_control = Control(setup_weights, update_weights, [
    Slider("T", (0.25, 0.5, 1.0, 2.0, 4.0), 1.0, label="temperature T"),
], alt="Softmax weights of the scores 2, 1, 0.5 and -1 at temperature T = {{T}}.",
   figsize=(5, 2.6))
plt.close(weights_control.fig)  # shown by the control itself, not by pyplot
weights_control
```

(sec-{name}-derivation)=
## The softmax, derived in the open

The weights are $p_j = e^{{z_j / T}} / \\sum_i e^{{z_i / T}}$ {{cite:p}}`vaswani2017attention`.
Subtracting the largest score first changes nothing in exact arithmetic and keeps every
exponential at most 1.

```{{admonition}} Predict, then run
:class: predict

At $T = 4$, will the largest weight be nearer a quarter, or stay near its value at $T = 1$?
```

```{{code-cell}} ipython3
:tags: [derive-softmax-{name}]

def softmax(z, T=1.0):
    e = np.exp((z - z.max()) / T)  # at most 1: no overflow
    return e / e.sum()


print(f"largest weight at T = 4: {{softmax(z, T=4.0).max():.3f}}")
```

At $T = 4$ the largest weight falls to 0.340.

```{{code-cell}} ipython3
:tags: [hide-input, check]

assert np.abs(softmax(z, T=4.0) - lib.softmax(z / 4.0)).max() < 1e-15
print("Checked: the derived softmax equals lib.softmax, to below 1e-15")
```

## Summary

- The softmax turns scores into weights that are positive and sum to 1.
- The largest score takes the largest weight, but not all of it: 0.609 of four at $T = 1$.
- Dividing the scores by a temperature $T > 1$ spreads the weights; $T < 1$ sharpens them.
- At $T = 4$ the largest weight falls to 0.340.
- Subtracting the largest score first keeps the computation finite.

## Exercises

```{{exercise}} By hand · Two equal scores
:label: ex-{name}-equal

Two of four scores are equal and larger than the others. What happens to their weights as
$T \\to 0$?
```

```{{solution}} ex-{name}-equal
:class: dropdown

Each of the two tends to $1/2$: the ratio of their weights is always $e^0 = 1$, and every other
ratio $e^{{(z_j - z_{{\\max}})/T}}$ tends to 0.
```

```{{exercise}} Derive · The uniform limit
:label: ex-{name}-uniform

Show that every weight tends to $1/n$ as $T \\to \\infty$, for $n$ scores.
```

```{{solution}} ex-{name}-uniform
:class: dropdown

$e^{{z_j/T}} \\to 1$ for every $j$, so each weight tends to $1/n$.
```

## Next

{{doc}}`{next_doc}` comes next.
'''


def toc_part(toc: dict, part: str) -> dict:
    for entry in toc.get("parts", []):
        if entry.get("caption") == part:
            return entry
    captions = [e.get("caption") for e in toc.get("parts", [])]
    raise SystemExit(f"_toc.yml has no part {part!r}; choose among {captions}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="file name without .md: lower case words and hyphens")
    parser.add_argument("part", help="the part of _toc.yml it joins (its caption)")
    parser.add_argument("--title", help="the chapter's title (default: from the name)")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", args.name):
        raise SystemExit(f"name {args.name!r}: use lower case words joined by hyphens")
    path = ROOT / "book" / f"{args.name}.md"
    if path.exists():
        raise SystemExit(f"{path.relative_to(ROOT)} exists already")
    toc_path = ROOT / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())
    part = toc_part(toc, args.part)
    title = args.title or args.name.replace("-", " ").capitalize()
    intro = ROOT / "book" / "intro.md"
    intro_title = re.search(r"^# (.+)$", intro.read_text(), re.MULTILINE).group(1).strip()
    # links with their text, the form both the site and JupyterLab read (tools/lab_compat.py)
    path.write_text(HEADER + TEMPLATE.format(name=args.name, title=title,
                                             next_doc=f"{intro_title} <intro>"),
                    encoding="utf-8")
    # _toc.yml: one line after the part's last chapter, so its comments and layout stay.
    last = part["chapters"][-1]["file"]
    text = toc_path.read_text()
    line = f"      - file: {last}\n"
    if line not in text:
        raise SystemExit(f"_toc.yml: cannot find the line {line.strip()!r} to add after")
    toc_path.write_text(text.replace(line, line + f"      - file: book/{args.name}\n", 1))
    # The front door's table of chapters: one row at its end.
    rows = re.findall(r"^\| \{doc\}`[^`]+` \|.*\|\n", intro.read_text(), re.MULTILINE)
    if not rows:
        raise SystemExit("book/intro.md has no table of chapters to add a row to")
    row = (f"| {{doc}}`{title} <{args.name}>` | What does the temperature of a softmax do? | "
           "2 min | Expectation and Variance |\n")
    intro.write_text(intro.read_text().replace(rows[-1], rows[-1] + row, 1))
    print(f"wrote {path.relative_to(ROOT)}, added it to _toc.yml ({args.part}) and to the "
          "table of chapters in book/intro.md.\nAlso yours to edit: that row's question, "
          "minutes and prerequisites; the 'Reading paths' paragraph below the table; the "
          f"'## Next' section of {last}.md, which should now lead to this chapter; and the "
          "chapter table of README.md.\nThen: write it; make references "
          f"CHAPTER={args.name} after changing its cells; measure its reading time with "
          f".venv/bin/python tools/wordcount.py book/{args.name}.md ('visible min') and write "
          "it into the opening box and the intro row; make check "
          f"CHAPTER={args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
