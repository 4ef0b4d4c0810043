"""The one interface the store talks to, whatever database is behind it.

Store code writes portable SQL with `?` placeholders and reads rows as dicts. Everything that
differs between SQLite and PostgreSQL lives in the two backends (`sqlite.py`, `postgres.py`):
connections, placeholders, how a write transaction takes its lock, text search operators, the
schema-version bookkeeping and the few DDL words that differ. Driver errors come out as
`DatabaseError`, with any password in the message masked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol

from sleuth.core.urls import Backend
from sleuth.store.errors import Conflict

Row = dict[str, Any]
Params = Sequence[Any]


class DatabaseError(RuntimeError):
    """A query or connection failed; the message is safe to show (no password)."""


class IntegrityConflict(DatabaseError, Conflict):
    """The database refused a write on a constraint (either backend's integrity error): a row it
    refers to went away, or one it adds appeared, in a concurrent transaction. Store methods
    check what they depend on first; this is the backstop, answered as a conflict, not a crash."""


# How a SELECT inside a write transaction locks the rows it reads until the transaction ends:
# `keep` lets others read and update them but not delete them (nor take `delete`);
# `delete` is taken before deleting a row and its dependants.
RowLock = Literal["keep", "delete"]


class Transaction(Protocol):
    def execute(self, sql: str, params: Params = ()) -> None: ...

    def executemany(self, sql: str, rows: Iterable[Params]) -> None: ...

    def fetch_one(self, sql: str, params: Params = ()) -> Row | None: ...

    def fetch_all(self, sql: str, params: Params = ()) -> list[Row]: ...


class Database(Protocol):
    backend: Backend
    ddl_words: Mapping[str, str]  # how this dialect spells the placeholders in migrations' DDL

    def describe(self) -> str:
        """Where the data lives, safe to print."""
        ...

    def fetch_all(self, sql: str, params: Params = ()) -> list[Row]: ...

    def fetch_one(self, sql: str, params: Params = ()) -> Row | None: ...

    def execute(self, sql: str, params: Params = ()) -> None:
        """One statement, committed on return."""
        ...

    def transaction(self) -> AbstractContextManager[Transaction]:
        """A write transaction: committed when the block ends, rolled back on any error."""
        ...

    def row_lock(self, lock: RowLock) -> str:
        """The clause ending a SELECT in a write transaction that locks the rows it reads (`RowLock`)."""
        ...

    def ilike(self, column: str) -> str:
        """A condition: `column` contains the `?` parameter (a LIKE pattern, `\\` escapes), ignoring case."""
        ...

    def contains(self, column: str) -> str:
        """A condition: `column` contains the `?` parameter as plain text, case and all."""
        ...

    # -- migrations (used by migrations.migrate only) ----------------------------------------

    def migration_transaction(self) -> AbstractContextManager[Transaction]:
        """A transaction that no other process migrating the same database runs alongside."""
        ...

    def schema_version(self, tx: Transaction) -> int: ...

    def record_migration(self, tx: Transaction, version: int, name: str) -> None: ...

    def close(self) -> None: ...


def like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in `text` escaped, for `Database.ilike`."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
