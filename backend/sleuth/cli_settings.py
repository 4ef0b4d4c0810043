"""Settings for a CLI command: a bad setting is one line and a non-zero exit, not a traceback."""

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
