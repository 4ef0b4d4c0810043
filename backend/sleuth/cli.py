"""The `sleuth` command line."""

from __future__ import annotations

import click

from sleuth import __version__
from sleuth.api.commands import serve
from sleuth.cli_doctor import doctor
from sleuth.cli_eval import eval_command
from sleuth.cli_reports import ask, export, narrate
from sleuth.cli_research import research, schema
from sleuth.cli_sources import show, sources
from sleuth.tools.local.commands import index


@click.group()
@click.version_option(__version__, prog_name="sleuth")
def main() -> None:
    """Sleuth: deep research with parallel agents and verified citations."""


for command in (research, schema, doctor, eval_command, sources, show, index, serve, export, ask, narrate):
    main.add_command(command)
