"""Settings for a CLI command: a bad setting (or an unusable database) is one line and a non-zero exit."""

from __future__ import annotations

import click

from sleuth.config import Settings, SettingsError, load_settings
from sleuth.store.health import StoreUnavailable, check_database


def cli_settings() -> Settings:
    try:
        return load_settings()
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None


def cli_check_database(settings: Settings) -> None:
    """Refuse to start, in one line, when the database the command will write to cannot be used."""

    try:
        check_database(settings)
    except StoreUnavailable as exc:
        raise click.ClickException(str(exc)) from None
