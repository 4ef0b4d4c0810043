"""Whether the configured database can be used, in one line: for `sleuth doctor`, and for `serve`
and `research` to refuse up front instead of failing later with a traceback."""

from __future__ import annotations

from sleuth.config import Settings
from sleuth.core.urls import DatabaseUrlError, database_target
from sleuth.store.backends import open_database
from sleuth.store.database import DatabaseError
from sleuth.store.migrations import MIGRATIONS, current_version

BACKEND_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


class StoreUnavailable(Exception):
    """The database cannot be used; the message says which one (password masked) and why."""


def check_database(settings: Settings) -> str:
    """Connect, read the schema version, disconnect; what was found, or StoreUnavailable."""
    url = settings.database_url.get_secret_value() if settings.database_url else None
    try:
        target = database_target(url, settings.data_dir)
    except DatabaseUrlError as exc:
        raise StoreUnavailable(f"SLEUTH_DATABASE_URL {exc}") from None
    name = BACKEND_NAMES[target.backend]
    try:
        database = open_database(target, pool_size=1)
        try:
            version = current_version(database)
        finally:
            database.close()
    except DatabaseError as exc:
        raise StoreUnavailable(f"{name} database {target.describe()} cannot be used: {exc}") from None
    if version > len(MIGRATIONS):
        raise StoreUnavailable(
            f"{name} database {target.describe()} has schema v{version}, newer than this Sleuth (v{len(MIGRATIONS)})"
        )
    state = "up to date" if version == len(MIGRATIONS) else "migrated when the server starts"
    return f"{name} {target.describe()} answers (schema v{version} of {len(MIGRATIONS)}, {state})"
