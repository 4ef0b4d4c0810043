"""Settings for a CLI command: a bad setting (or an unusable database) is one line and a non-zero exit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from sleuth.config import Settings


def cli_settings() -> Settings:
    from sleuth.config import SettingsError, load_settings

    try:
        return load_settings()
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None


def cli_check_redis(settings: Settings) -> None:
    """With SLEUTH_REDIS_URL: refuse to start, in one line, when Redis does not answer."""
    from sleuth.scaleout.connection import RedisUnavailable, check_redis

    if settings.redis_url is None:
        return
    try:
        check_redis(settings)
    except RedisUnavailable as exc:
        raise click.ClickException(str(exc)) from None


def cli_check_database(settings: Settings) -> None:
    """Refuse to start, in one line, when the database the command will write to cannot be used."""
    from sleuth.store.health import StoreUnavailable, check_database

    try:
        check_database(settings)
    except StoreUnavailable as exc:
        raise click.ClickException(str(exc)) from None
