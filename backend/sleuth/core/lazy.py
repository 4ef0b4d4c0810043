"""Package exports that load their module on first use (PEP 562).

A package `__init__` that imports its submodules makes every importer of any one submodule pay
for all of them (FastAPI, the HTML parser, the PDF reader); `sleuth --help` and the start of a
run should pay for none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_exports(package: str, module_of: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that finds each exported name in its submodule."""

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{module}"), name)

    return __getattr__
