"""SLEUTH_REDIS_URL: the Redis that carries live packets and run control between processes,
checked when the settings load. Nothing here connects."""

from __future__ import annotations

from urllib.parse import urlsplit

from sleuth.core.redaction import redact_url

SCHEMES = ("redis", "rediss")
EXPECTED = "redis://[:PASSWORD@]HOST[:PORT][/DB]"


class RedisUrlError(ValueError):
    """A Redis URL that cannot be used; the message shows it with its password masked."""


def check_redis_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise RedisUrlError(f"{redact_url(url)!r} is not {EXPECTED}") from None
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise RedisUrlError(f"{redact_url(url)!r} is not {EXPECTED}")
    if port == 0:
        raise RedisUrlError(f"{redact_url(url)!r} has no usable port")
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise RedisUrlError(f"{redact_url(url)!r}: the database after the host is a number (redis://HOST:PORT/0)")
