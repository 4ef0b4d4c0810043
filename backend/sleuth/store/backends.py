"""Opens the database a URL names: the SQLite file under the data dir, or PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from sleuth.core.urls import DatabaseTarget
from sleuth.store.database import Database
from sleuth.store.postgres import PostgresDatabase
from sleuth.store.sqlite import SqliteDatabase


def open_database(target: DatabaseTarget, *, pool_size: int) -> Database:
    """Connect to the target (DatabaseError with a one-line reason if it does not answer)."""
    if target.backend == "postgresql":
        return PostgresDatabase(target, pool_size=pool_size)
    return SqliteDatabase(Path(target.location))
