"""A control's parameters: each builds its own live widget and its own HTML input.

* :class:`Slider` – numeric values, a bounded selection slider live and a range input on the
  site;
* :class:`Toggle` – yes or no;
* :class:`Choice` – one of a few named options.

Each validates the values a control is set to (a ``ValueError`` that names the parameter and
its range), so no control can be driven out of range.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Choice", "Slider", "Toggle"]

#: The most parameters a control takes (the live face links each to one of its picture's
#: ``i0`` … ``i3``; and every combination of their values is drawn).
MAX_PARAMS = 4


def _describe(param) -> str:
    return html.escape(param.label or param.name)


@dataclass(frozen=True)
class Slider:
    """A numeric parameter: a live slider over ``[min, max]`` and a list of explorable values.

    ``values`` are the states precomputed for the site; ``default`` must be one of them.
    The live slider is bounded, so it cannot be driven out of ``[min, max]``.
    """

    name: str
    values: tuple
    default: Any
    label: str = ""
    integer: bool = False
    fmt: str = "{}"

    def __post_init__(self):
        values = tuple(self.values)
        if not values:
            raise ValueError(f"slider {self.name!r} needs at least one value")
        if any(not np.isfinite(v) for v in values):
            raise ValueError(f"slider {self.name!r} has non-finite values")
        if list(values) != sorted(values):
            raise ValueError(f"slider {self.name!r}: values must be increasing")
        if self.default not in values:
            raise ValueError(
                f"slider {self.name!r}: default {self.default!r} is not one of its values"
            )
        object.__setattr__(self, "values", values)

    @property
    def min(self):
        return self.values[0]

    @property
    def max(self):
        return self.values[-1]

    def validate(self, value):
        if not (self.min <= value <= self.max):
            raise ValueError(
                f"{self.name} must lie in [{self.min}, {self.max}], got {value!r}"
            )
        return int(value) if self.integer else float(value)

    def live_widget(self):
        """An ipywidgets selection slider over ``values`` (it cannot leave them), showing each
        as ``fmt`` writes it; its ``index`` picks the frame, as the site's range input does."""
        import ipywidgets as W

        return W.SelectionSlider(
            options=[(self.fmt.format(v), v) for v in self.values], value=self.default,
            continuous_update=True, description=self.label or self.name,
            style={"description_width": "initial"})

    def html_input(self, uid: str, index: int, value) -> str:
        """A range input over the explorable values' positions, with its value beside it."""
        at = self.values.index(value)
        shown = html.escape(self.fmt.format(self.values[at]))
        return (
            f'<label for="{uid}">{_describe(self)}</label>'
            f'<input type="range" id="{uid}" min="0" max="{len(self.values) - 1}" step="1" '
            f'value="{at}" data-param="{index}" aria-valuetext="{shown}">'
            f'<output for="{uid}">{shown}</output>'
        )


@dataclass(frozen=True)
class Toggle:
    """A yes/no parameter (a checkbox)."""

    name: str
    default: bool = False
    label: str = ""
    fmt: str = field(default="{}", repr=False)

    @property
    def values(self):
        return (False, True)

    def validate(self, value):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{self.name} must be True or False, got {value!r}")
        return bool(value)

    def live_widget(self):
        """Two ipywidgets toggle buttons, "off" and "on" (a checkbox has no ``index`` for the
        browser to pick the frame with)."""
        import ipywidgets as W

        return W.ToggleButtons(options=[("off", False), ("on", True)], value=self.default,
                               description=self.label or self.name,
                               style={"description_width": "initial", "button_width": "auto"})

    def html_input(self, uid: str, index: int, value) -> str:
        """A checkbox, its label after it."""
        checked = " checked" if value else ""
        return (f'<input type="checkbox" id="{uid}" data-param="{index}"{checked}>'
                f'<label for="{uid}">{_describe(self)}</label>')


@dataclass(frozen=True)
class Choice:
    """A parameter chosen from a few named options (a drop-down list)."""

    name: str
    values: tuple
    default: Any
    label: str = ""
    fmt: str = "{}"

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(self.values))
        if self.default not in self.values:
            raise ValueError(f"choice {self.name!r}: default {self.default!r} is not an option")

    def validate(self, value):
        if value not in self.values:
            raise ValueError(f"{self.name} must be one of {self.values}, got {value!r}")
        return value

    def live_widget(self):
        """A row of ipywidgets toggle buttons, one per option.

        Not a drop-down: in JupyterLab a focused drop-down loses its arrow and digit keys to
        the notebook's shortcuts (the next cell, a Markdown heading); buttons take Tab and Space.
        """
        import ipywidgets as W

        return W.ToggleButtons(options=list(self.values), value=self.default,
                               description=self.label or self.name,
                               style={"description_width": "initial"})

    def html_input(self, uid: str, index: int, value) -> str:
        """A drop-down list of the options, as their shown values."""
        at = self.values.index(value)
        options = "".join(
            f'<option value="{j}"{" selected" if j == at else ""}>'
            f"{html.escape(self.fmt.format(v))}</option>"
            for j, v in enumerate(self.values)
        )
        return (f'<label for="{uid}">{_describe(self)}</label>'
                f'<select id="{uid}" data-param="{index}">{options}</select>')
