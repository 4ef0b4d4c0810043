"""The SQLite backend: one file under the data dir, WAL mode, one connection per thread.

SQLite is the embedded default; its SQL is the store's own (`?` placeholders), so queries pass
through unchanged. The schema version is `PRAGMA user_version`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from sleuth.core.sqlite import write_transaction
from sleuth.core.urls import Backend
from sleuth.store.database import DatabaseError, IntegrityConflict, Params, Row, RowLock, Transaction

# The words a migration's DDL spells per dialect (see migrations.py).
DDL_WORDS: Mapping[str, str] = {"{REAL}": "REAL", "{ROWID}": "", "{WITHOUT_ROWID}": "WITHOUT ROWID"}


def connect(path: Path) -> sqlite3.Connection:
    """A connection for one thread.

    WAL lets the packet writer thread commit while request handlers read. synchronous=NORMAL in
    WAL mode means a commit survives a crash of the process (what `kill -9` tests) but the last
    few commits may be lost on power failure; that is the usual trade for a fast stream.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.row_factory = _dict_row
    _use_wal(conn)
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch the file to WAL (a persistent mode, so only its first opener really changes it).

    The switch does not wait on the busy timeout: a second process opening a new file at the same
    moment gets "database is locked" at once. Reading the mode does wait, so it learns whether the
    first one has switched the file already.
    """
    for _ in range(3):
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
            row = conn.execute("PRAGMA journal_mode").fetchone()
            if row and str(next(iter(row.values()))).lower() == "wal":
                return
    conn.execute("PRAGMA journal_mode=WAL")


def _dict_row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> Row:
    return {column[0]: value for column, value in zip(cursor.description, values, strict=True)}


class _SqliteTransaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> None:
        with _errors():
            self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        with _errors():
            self._conn.executemany(sql, rows)

    def fetch_one(self, sql: str, params: Params = ()) -> Row | None:
        with _errors():
            row: Row | None = self._conn.execute(sql, params).fetchone()
        return row

    def fetch_all(self, sql: str, params: Params = ()) -> list[Row]:
        with _errors():
            return list(self._conn.execute(sql, params).fetchall())


class SqliteDatabase:
    backend: Backend = "sqlite"
    ddl_words = DDL_WORDS

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._conn()  # fail here, with the reason, if the file cannot be opened

    def describe(self) -> str:
        return str(self.path)

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            with _errors():
                conn = connect(self.path)
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    def fetch_all(self, sql: str, params: Params = ()) -> list[Row]:
        return _SqliteTransaction(self._conn()).fetch_all(sql, params)

    def fetch_one(self, sql: str, params: Params = ()) -> Row | None:
        return _SqliteTransaction(self._conn()).fetch_one(sql, params)

    def execute(self, sql: str, params: Params = ()) -> None:
        _SqliteTransaction(self._conn()).execute(sql, params)  # autocommit: the statement is its transaction

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with _errors(), write_transaction(self._conn()) as conn:
            yield _SqliteTransaction(conn)

    def row_lock(self, lock: RowLock) -> str:
        return ""  # a write transaction (BEGIN IMMEDIATE) holds the whole database until it ends

    def ilike(self, column: str) -> str:
        return f"{column} LIKE ? ESCAPE '\\'"  # SQLite's LIKE ignores (ASCII) case already

    def contains(self, column: str) -> str:
        return f"instr({column}, ?) > 0"

    def migration_transaction(self) -> AbstractContextManager[Transaction]:
        # The write lock comes first, so two processes starting at once do not both apply the
        # same migration: the second waits, then sees the new version.
        return self.transaction()

    def schema_version(self, tx: Transaction) -> int:
        row = tx.fetch_one("PRAGMA user_version")
        return int(row["user_version"]) if row else 0

    def record_migration(self, tx: Transaction, version: int, name: str) -> None:
        tx.execute(f"PRAGMA user_version = {int(version)}")

    def close(self) -> None:
        with self._all_lock:
            for conn in self._all:
                try:
                    conn.close()
                except sqlite3.ProgrammingError:
                    pass  # created in another thread that is gone; nothing to release
            self._all.clear()
        self._local = threading.local()


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except sqlite3.IntegrityError as exc:
        raise IntegrityConflict(str(exc)) from exc
    except sqlite3.Error as exc:
        raise DatabaseError(str(exc)) from exc
    except OSError as exc:  # the folder for the file cannot be made
        raise DatabaseError(f"{exc.strerror or exc}: {exc.filename}") from exc
