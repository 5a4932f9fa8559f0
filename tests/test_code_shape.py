"""The project's code stays readable: no function over :data:`MAX_LINES` lines."""

from __future__ import annotations

import ast

from tests.nbharness import ROOT

#: The longest function, in lines, in lib/, tools/, tests/ and benchmarks/ (CONTRIBUTING.md).
MAX_LINES = 50


def long_functions(folders=("lib", "tools", "tests", "benchmarks")) -> list[str]:
    """``path:function (N lines)`` for every function longer than :data:`MAX_LINES`."""
    found = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MAX_LINES:
                        found.append(f"{path.relative_to(ROOT)}:{node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_fifty_lines():
    assert not long_functions(), "split these: " + "; ".join(long_functions())
