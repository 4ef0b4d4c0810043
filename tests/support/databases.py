"""The database the tests run against: SQLite under each test's data dir, or, when
SLEUTH_TEST_DATABASE_URL names a PostgreSQL database, a fresh schema in it per test.

A schema (created and dropped around each test) is much faster than a database and just as
isolated: the store's URL carries `options=-csearch_path=<schema>`, the way a user would point
Sleuth at a schema of a shared database.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sleuth.store import Database

# Read once, at import: the per-test environment is scrubbed of SLEUTH_* variables.
TEST_DATABASE_URL = os.environ.get("SLEUTH_TEST_DATABASE_URL", "").strip() or None
POSTGRES = TEST_DATABASE_URL is not None


def with_search_path(url: str, schema: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-csearch_path={schema}"))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))


@contextmanager
def fresh_schema(admin_url: str) -> Iterator[str]:
    """A URL whose tables live in a new, empty schema, dropped with everything in it afterwards."""
    import psycopg
    from psycopg import sql

    name = f"sleuth_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    try:
        yield with_search_path(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))


def table_columns(database: Database) -> dict[str, list[str]]:
    """Every table of the store's schema with its columns (the catalogue differs per backend)."""
    if database.backend == "sqlite":
        tables = [row["name"] for row in database.fetch_all("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: [row["name"] for row in database.fetch_all(f"PRAGMA table_info({t})")] for t in tables}
    columns: dict[str, list[str]] = {}
    for row in database.fetch_all(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
    ):
        columns.setdefault(row["table_name"], []).append(row["column_name"])
    return columns
