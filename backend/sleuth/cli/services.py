"""The services `sleuth serve` and `sleuth worker` use besides the database: Redis, with scale-out."""

from __future__ import annotations

import click

from sleuth.config import Settings
from sleuth.scaleout.connection import RedisUnavailable, check_redis


def cli_check_redis(settings: Settings) -> None:
    """With SLEUTH_REDIS_URL: refuse to start, in one line, when Redis does not answer."""

    if settings.redis_url is None:
        return
    try:
        check_redis(settings)
    except RedisUnavailable as exc:
        raise click.ClickException(str(exc)) from None
