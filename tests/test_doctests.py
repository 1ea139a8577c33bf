"""Every docstring example in the lucid package runs and prints what it says."""
import doctest
import importlib
import pkgutil

import pytest

import lucid


def _modules():
    names = ["lucid"]
    for info in pkgutil.walk_packages(lucid.__path__, "lucid."):
        if info.name.split(".")[-1] in ("__main__", "parity"):
            continue  # command-line entry points run their job on import
        names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
