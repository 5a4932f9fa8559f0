"""Every example in lib's docstrings runs and prints what it says."""

import doctest
import importlib
import pkgutil

import pytest

import lib

MODULES = sorted(m.name for m in pkgutil.iter_modules(lib.__path__, "lib."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_every_public_function_has_an_example():
    missing = []
    for name in MODULES:
        if name.split(".")[-1].startswith("_"):
            continue
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", dir(module)):
            obj = getattr(module, attr)
            if attr.startswith("_") or not callable(obj) or getattr(obj, "__module__", "") != name:
                continue
            if isinstance(obj, type):
                continue
            if ">>>" not in (obj.__doc__ or ""):
                missing.append(f"{name}.{attr}")
    assert not missing, f"public functions without a runnable example: {missing}"
