"""Settings for a CLI command: a bad setting is one line and a non-zero exit, not a traceback."""

from __future__ import annotations

import click

from sleuth.config import Settings, SettingsError, load_settings


def cli_settings() -> Settings:
    try:
        return load_settings()
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
