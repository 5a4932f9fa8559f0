"""Every example in lib's docstrings runs and prints what it says; ``lib`` exports the numerics."""

import doctest
import importlib
import pkgutil

import pytest

import lib

#: Every module of lib, subpackages included (``lib.widgets.control``, ...).
MODULES = sorted(m.name for m in pkgutil.walk_packages(lib.__path__, "lib."))


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


#: Modules whose public functions ``lib`` re-exports (plotting and controls stay in theirs).
NUMERICS = [name for name in MODULES if name.count(".") == 1
            and name.split(".")[-1] not in ("plotting", "widgets") and "._" not in name]


def test_lib_exports_every_public_function_of_the_numerics():
    missing = []
    for name in NUMERICS:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (not attr.startswith("_") and callable(obj) and not isinstance(obj, type)
                    and getattr(obj, "__module__", "") == name and attr not in lib.__all__):
                missing.append(f"{name}.{attr}")
    assert not missing, (
        f"not exported by lib: {missing}. Add each name to its module's __all__ (lib/__init__.py "
        "re-exports every numerics module's __all__; a new module also goes in its imports, "
        "its NUMERICS and its docstring)")
    assert all(hasattr(lib, attr) for attr in lib.__all__)
    assert all(f":mod:`{name}`" in lib.__doc__ for name in MODULES
               if "._" not in name and name.count(".") == 1)
