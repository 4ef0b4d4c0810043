"""What a child of the fork server reports back (a target must be importable by reference)."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection


def report_loaded(modules: list[str], conn: Connection) -> None:
    """Send which of `modules` this process has imported."""
    conn.send([module for module in modules if module in sys.modules])
    conn.close()
