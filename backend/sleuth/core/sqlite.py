"""SQLite plumbing shared by the store and the local corpus index."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on an autocommit connection: committed on success, rolled back on any error.

    BEGIN IMMEDIATE takes the write lock up front, so a transaction that reads before it writes
    cannot be overtaken by another writer between the two.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
