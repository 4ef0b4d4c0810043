"""The database the tests run against: SQLite under each test's data dir, or, when
SLEUTH_TEST_DATABASE_URL names a PostgreSQL database, a fresh schema in it per test.

(`sleuth_testkit.databases` makes the schema; benchmarks use it too.)
"""

from __future__ import annotations

import os

from sleuth.store.database import Database
from sleuth_testkit.databases import fresh_schema, with_search_path

__all__ = ["POSTGRES", "TEST_DATABASE_URL", "fresh_schema", "table_columns", "with_search_path"]

# Read once, at import: the per-test environment is scrubbed of SLEUTH_* variables.
TEST_DATABASE_URL = os.environ.get("SLEUTH_TEST_DATABASE_URL", "").strip() or None
POSTGRES = TEST_DATABASE_URL is not None


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
