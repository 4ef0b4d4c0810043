"""Connecting to SLEUTH_REDIS_URL, and saying in one line (password masked) when it cannot be."""

from __future__ import annotations

import os

from sleuth.config import Settings
from sleuth.core import heavy
from sleuth.core.redaction import redact_url, redact_values, url_password
from sleuth.store.recovery import this_host


class RedisUnavailable(Exception):
    """Redis cannot be used; the message names it with its password masked."""


def redis_url(settings: Settings) -> str:
    if settings.redis_url is None:
        raise RedisUnavailable("SLEUTH_REDIS_URL is not set")
    return settings.redis_url.get_secret_value()


# Connections beyond one per run publishing at once (a worker) or being started (a server):
# admission, control, leases, the reaper, the packet reader.
POOL_HEADROOM = 64


def open_redis(settings: Settings) -> heavy.Redis:
    # A timeout on connecting but none on reading (redis-py may set a default read timeout unless
    # told otherwise): XREAD BLOCK and pub/sub wait on purpose, and a read cut by a timeout is retried
    # by redis-py, which can swallow the cancel of the task that waits in it. Dead connections are
    # found by the health check instead.
    return heavy.Redis.from_url(
        redis_url(settings),
        decode_responses=True,
        socket_connect_timeout=5,
        socket_timeout=None,
        health_check_interval=30,
        max_connections=settings.max_runs + POOL_HEADROOM,
        client_name=client_name(),
    )


def client_name() -> str:
    """Names this process's connections (CLIENT LIST) so an operator can tell whose they are."""
    return f"sleuth-{this_host()}-{os.getpid()}"


def check_redis(settings: Settings) -> str:
    """Ping once (blocking); what answered, or RedisUnavailable."""
    url = redis_url(settings)
    client = heavy.redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        info = client.info("server")
    except heavy.redis.RedisError as exc:
        raise RedisUnavailable(f"Redis {redact_url(url)} cannot be reached: {_reason(exc, url)}") from None
    finally:
        client.close()
    return f"Redis {redact_url(url)} answers (version {info.get('redis_version', '?')})"


def _reason(exc: Exception, url: str) -> str:
    return redact_values(" ".join(str(exc).split()), [url_password(url)]) or type(exc).__name__
