"""Local document corpus: a persistent SQLite FTS5 index, the built-in Python reference, `sleuth index`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sleuth.core.lazy import lazy_exports

if TYPE_CHECKING:
    from sleuth.tools.local.providers import LocalReader, LocalSearch, build_local_tools

__all__ = ["LocalReader", "LocalSearch", "build_local_tools"]
__getattr__ = lazy_exports(
    __name__, {"LocalReader": "providers", "LocalSearch": "providers", "build_local_tools": "providers"}
)
