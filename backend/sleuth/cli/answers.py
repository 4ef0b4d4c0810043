"""What `sleuth research` says at the terminal when a run stops short of a report, run here or on a
server alike: its clarifying questions (and where the answer comes from), or why it failed."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from sleuth.cli.progress import ProgressPrinter


def answer_questions(questions: Sequence[str], answer: str | None, *, as_json: bool) -> str | None:
    """The answer to a run's clarifying questions: `--answer`'s, else asked at the terminal. None when
    there is no terminal to ask at (the user is told how to answer), or with `--json`."""
    if not as_json:
        click.echo("Sleuth needs a few details before researching:", err=True)
        for i, q in enumerate(questions, 1):
            click.echo(f"  {i}. {q}", err=True)
    if answer is not None:
        return answer
    if as_json or not sys.stdin.isatty():
        if not as_json:
            click.echo('Run again with --answer "...", more detail in the question, or --no-clarify.', err=True)
        return None
    return str(click.prompt("Your answer", err=True))


def exit_failed(printer: ProgressPrinter, reason: str | None, *, as_json: bool) -> None:
    """End the command for a run that failed: the reason the stream gave, else `reason`."""
    if not as_json:
        click.echo(f"sleuth: research failed: {printer.fatal or reason or 'see the messages above'}", err=True)
    sys.exit(1)
