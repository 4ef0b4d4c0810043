"""The URLs of Sleuth's neighbours, checked when the settings load; nothing here connects.

SLEUTH_DATABASE_URL: which database the store uses. Unset means the embedded default, a SQLite
file under the data dir. `sqlite:///ABSOLUTE/PATH` names another SQLite file; `postgresql://` (or
`postgres://`) is any libpq connection URL, for several servers sharing one database.

SLEUTH_REDIS_URL: the Redis that carries live packets and run control between processes.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from sleuth.core import heavy
from sleuth.core.redaction import redact_url, redact_values, url_password

Backend = Literal["sqlite", "postgresql"]
DB_FILENAME = "sleuth.db"
POSTGRES_SCHEMES = ("postgresql", "postgres")
DATABASE_EXPECTED = "sqlite:///ABSOLUTE/PATH.db or postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
REDIS_SCHEMES = ("redis", "rediss")
REDIS_EXPECTED = "redis://[:PASSWORD@]HOST[:PORT][/DB]"


class DatabaseUrlError(ValueError):
    """A database URL that cannot be used; the message shows it with its password masked."""


class RedisUrlError(ValueError):
    """A Redis URL that cannot be used; the message shows it with its password masked."""


@dataclass(frozen=True)
class DatabaseTarget:
    backend: Backend
    location: str  # the SQLite file's path, or the PostgreSQL connection URL (may hold a password)

    def describe(self) -> str:
        """Where the data lives, safe to print: the password of a URL is masked."""
        return self.location if self.backend == "sqlite" else redact_url(self.location)


def database_path(data_dir: Path) -> Path:
    """The embedded default: one SQLite file under the data dir."""
    return Path(data_dir) / DB_FILENAME


def database_target(url: str | None, data_dir: Path) -> DatabaseTarget:
    """The database a URL names (unset or blank: SQLite under `data_dir`); DatabaseUrlError if unusable."""
    raw = (url or "").strip()
    if not raw:
        return DatabaseTarget("sqlite", str(database_path(data_dir)))
    scheme = raw.split(":", 1)[0] if ":" in raw else ""
    if scheme == "sqlite":
        return DatabaseTarget("sqlite", _sqlite_path(raw))
    if scheme in POSTGRES_SCHEMES:
        _check_postgres(raw)
        return DatabaseTarget("postgresql", raw)
    hint = " (use postgresql://, the driver is chosen by Sleuth)" if scheme.startswith("postgres") else ""
    raise DatabaseUrlError(f"{redact_url(raw)!r} is not {DATABASE_EXPECTED}{hint}")


def _sqlite_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc or not parts.path.startswith("/") or parts.query:
        raise DatabaseUrlError(f"{url!r}: a SQLite URL is sqlite:///ABSOLUTE/PATH.db")
    return parts.path


def _check_postgres(url: str) -> None:
    """libpq's own parser, so a typo is reported when the settings load, not at the first query."""
    try:
        heavy.conninfo_to_dict(url)
    except heavy.psycopg.ProgrammingError as exc:
        reason = redact_values(" ".join(str(exc).split()), [url_password(url)])
        raise DatabaseUrlError(f"{redact_url(url)!r} cannot be parsed: {reason}") from None


def check_redis_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise RedisUrlError(f"{redact_url(url)!r} is not {REDIS_EXPECTED}") from None
    if parts.scheme not in REDIS_SCHEMES or not parts.hostname:
        raise RedisUrlError(f"{redact_url(url)!r} is not {REDIS_EXPECTED}")
    if port == 0:
        raise RedisUrlError(f"{redact_url(url)!r} has no usable port")
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise RedisUrlError(f"{redact_url(url)!r}: the database after the host is a number (redis://HOST:PORT/0)")


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback address; a host name other than localhost may resolve to anything."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
