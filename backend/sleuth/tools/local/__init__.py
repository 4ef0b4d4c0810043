"""Local document corpus: a persistent SQLite FTS5 index, the built-in Python reference, `sleuth index`."""

from sleuth.tools.local.factory import build_local_tools
from sleuth.tools.local.providers import LocalReader, LocalSearch

__all__ = ["LocalReader", "LocalSearch", "build_local_tools"]
