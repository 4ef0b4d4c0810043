"""The PostgreSQL backend: psycopg 3 with its connection pool, for servers sharing one database.

The store is synchronous and thread-safe (request handlers call it through `asyncio.to_thread`,
the packet writer from its own thread), so a synchronous driver with a thread-safe pool fits it
as it is. Each call borrows a connection for one statement or one transaction; connections are
in autocommit, so a lone statement is committed when it returns (the packet writer relies on
it), and a broken connection is dropped by the pool instead of poisoning the next caller.

Dialect: `?` placeholders become `%s`; tables that SQLite orders by its implicit `rowid` get an
identity column of that name, hidden from `SELECT *` rows as SQLite hides its own; the schema
version is a `schema_migrations` table, and migrations serialise on an advisory lock per schema.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sleuth.core import heavy
from sleuth.core.redaction import redact_values, url_password
from sleuth.core.urls import Backend, DatabaseTarget
from sleuth.store.database import DatabaseError, IntegrityConflict, Params, Row, RowLock, Transaction

DDL_WORDS: Mapping[str, str] = {
    "{REAL}": "DOUBLE PRECISION",  # PostgreSQL's REAL is 4 bytes: unix times would lose their seconds
    "{ROWID}": "rowid BIGINT GENERATED ALWAYS AS IDENTITY,",
    "{WITHOUT_ROWID}": "",
}
CONNECT_TIMEOUT_S = 10  # unless the URL says otherwise
POOL_TIMEOUT_S = 30.0  # how long a caller waits for a free connection
HIDDEN_COLUMN = "rowid"
ROW_LOCKS: Mapping[RowLock, str] = {"keep": " FOR KEY SHARE", "delete": " FOR UPDATE"}


@functools.lru_cache(maxsize=512)
def _sql(sql: str) -> str:
    """The store's `?` placeholders in psycopg's style (a literal % must then be doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


def _rows_without_rowid(cursor: heavy.psycopg.Cursor[Any]) -> heavy.RowMaker[Row]:
    names = [column.name for column in cursor.description or ()]
    keep = [(i, name) for i, name in enumerate(names) if name != HIDDEN_COLUMN]

    def make(values: Sequence[Any]) -> Row:
        return {name: values[i] for i, name in keep}

    return make


class _PostgresTransaction:
    def __init__(self, conn: heavy.psycopg.Connection[Row], errors: _Errors) -> None:
        self._conn = conn
        self._errors = errors

    def execute(self, sql: str, params: Params = ()) -> None:
        with self._errors():
            self._conn.execute(_sql(sql), params)

    def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        with self._errors(), self._conn.cursor() as cursor:
            cursor.executemany(_sql(sql), rows)

    def fetch_one(self, sql: str, params: Params = ()) -> Row | None:
        with self._errors():
            return self._conn.execute(_sql(sql), params).fetchone()

    def fetch_all(self, sql: str, params: Params = ()) -> list[Row]:
        with self._errors():
            return self._conn.execute(_sql(sql), params).fetchall()


class _Errors:
    """Driver errors as DatabaseError, on one line, never with the password."""

    def __init__(self, url: str) -> None:
        self._secrets = [url_password(url), url]

    @contextmanager
    def __call__(self) -> Iterator[None]:
        try:
            yield
        except heavy.psycopg.IntegrityError as exc:
            raise IntegrityConflict(self.message(exc)) from exc
        except heavy.psycopg.Error as exc:
            raise DatabaseError(self.message(exc)) from exc

    def message(self, exc: BaseException) -> str:
        return redact_values(" ".join(str(exc).split()), self._secrets)


def _configure(conn: heavy.psycopg.Connection[Row]) -> None:
    """The durability SQLite's WAL with synchronous=NORMAL gives: a commit is visible to every
    server at once and survives a crash of Sleuth; only a crash of the database machine can lose
    its last fraction of a second. Waiting for the WAL flush instead costs a disk sync per packet
    batch, which would be most of a packet's delivery delay."""
    conn.execute("SET synchronous_commit = off")
    conn.adapters.register_dumper(str, _text_dumper())


@functools.cache
def _text_dumper() -> type[heavy.StrDumperUnknown]:
    class _TextDumper(heavy.StrDumperUnknown):
        """PostgreSQL text cannot hold NUL (0x00), which SQLite stores and a request may carry: it is
        stored as U+FFFD, so such a request succeeds on both backends instead of failing on one."""

        def dump(self, obj: str) -> heavy.Buffer | None:
            return super().dump(obj.replace("\x00", "\ufffd"))

    return _TextDumper


class PostgresDatabase:
    backend: Backend = "postgresql"
    ddl_words = DDL_WORDS

    def __init__(self, target: DatabaseTarget, *, pool_size: int) -> None:
        self._target = target
        self._errors = _Errors(target.location)
        options: dict[str, Any] = {"autocommit": True, "row_factory": _rows_without_rowid}
        if "connect_timeout" not in heavy.conninfo_to_dict(target.location):
            options["connect_timeout"] = CONNECT_TIMEOUT_S
        # One plain connection first: a wrong host, user or database is reported with libpq's
        # own reason now, not as a pool timeout later.
        try:
            heavy.psycopg.connect(target.location, **options).close()
        except heavy.psycopg.Error as exc:
            raise DatabaseError(self._errors.message(exc)) from None
        self._pool: heavy.ConnectionPool[heavy.psycopg.Connection[Row]] = heavy.ConnectionPool(
            target.location,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs=options,
            configure=_configure,
            timeout=POOL_TIMEOUT_S,
            name="sleuth-store",
            open=True,
        )

    def describe(self) -> str:
        return self._target.describe()

    def fetch_all(self, sql: str, params: Params = ()) -> list[Row]:
        with self._errors(), self._pool.connection() as conn:
            return conn.execute(_sql(sql), params).fetchall()

    def fetch_one(self, sql: str, params: Params = ()) -> Row | None:
        with self._errors(), self._pool.connection() as conn:
            return conn.execute(_sql(sql), params).fetchone()

    def execute(self, sql: str, params: Params = ()) -> None:
        with self._errors(), self._pool.connection() as conn:
            conn.execute(_sql(sql), params)

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self._errors(), self._pool.connection() as conn, conn.transaction():
            yield _PostgresTransaction(conn, self._errors)

    def row_lock(self, lock: RowLock) -> str:
        return ROW_LOCKS[lock]

    def ilike(self, column: str) -> str:
        return f"{column} ILIKE ? ESCAPE '\\'"

    def contains(self, column: str) -> str:
        return f"strpos({column}, ?) > 0"

    @contextmanager
    def migration_transaction(self) -> Iterator[Transaction]:
        with self.transaction() as tx:
            # Per schema, so databases sharing a server (or tests sharing a database) do not wait on each other.
            tx.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.sleuth-migrations'))")
            tx.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations"
                " (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            yield tx

    def schema_version(self, tx: Transaction) -> int:
        row = tx.fetch_one("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations")
        return int(row["version"]) if row else 0

    def record_migration(self, tx: Transaction, version: int, name: str) -> None:
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, now()::text)", (version, name)
        )

    def close(self) -> None:
        self._pool.close()
