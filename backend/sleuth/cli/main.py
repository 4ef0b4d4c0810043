"""The `sleuth` command line."""

from __future__ import annotations

import logging
import os
import sys

import click

from sleuth import __version__
from sleuth.cli.doctor import doctor
from sleuth.cli.eval import eval_command
from sleuth.cli.index import index
from sleuth.cli.reports import ask, export, narrate
from sleuth.cli.research import research, schema
from sleuth.cli.serve import serve
from sleuth.cli.sources import show, sources
from sleuth.cli.worker import worker


@click.group()
@click.version_option(__version__, prog_name="sleuth")
def main() -> None:
    """Sleuth: deep research with parallel agents and verified citations."""


for command in (research, schema, doctor, eval_command, sources, show, index, serve, worker, export, ask, narrate):
    main.add_command(command)


def _exit_code(exc: SystemExit) -> int:
    """What the interpreter would exit with for `exc` (printing a message code, as it does)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run() -> None:
    """The console script: the command, then an exit that skips the interpreter's teardown.

    Once a command has returned, all it wrote is flushed here; tearing down litellm's modules and
    walking its heap one last time would only add half a second to every command.
    """
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be written anyway
            pass
    os._exit(code)
