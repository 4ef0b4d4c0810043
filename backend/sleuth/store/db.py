"""Opening the SQLite database: one file under the data dir, WAL mode, sane pragmas."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DB_FILENAME = "sleuth.db"


def database_path(data_dir: Path) -> Path:
    return Path(data_dir) / DB_FILENAME


def connect(path: Path) -> sqlite3.Connection:
    """A connection for one thread.

    WAL lets the packet writer thread commit while request handlers read. synchronous=NORMAL in
    WAL mode means a commit survives a crash of the process (what `kill -9` tests) but the last
    few commits may be lost on power failure; that is the usual trade for a fast stream.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


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
