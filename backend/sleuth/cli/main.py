"""The `sleuth` command line."""

from __future__ import annotations

import gc
import logging
import os
import sys
from dataclasses import dataclass
from importlib import import_module

import click

from sleuth.core import heavy


@dataclass(frozen=True)
class Entry:
    module: str
    attribute: str
    summary: str  # the first paragraph of the command's help: what `sleuth --help` lists
    preload: bool = False  # runs the engine: litellm starts loading (core/heavy.py) once the module has imported


# The command table: `sleuth --help` lists the commands without importing them (their modules
# load the engine, the server or the store), and a command's module is imported when it runs.
# tests/unit/test_cli_table.py checks each summary against the command's own help.
COMMANDS: dict[str, Entry] = {
    "ask": Entry(
        "sleuth.cli.reports",
        "ask",
        "Ask a follow-up QUESTION about a stored report, answered from it and its sources only.",
    ),
    "doctor": Entry(
        "sleuth.cli.doctor",
        "doctor",
        "Check the settings, the database, the models, the search providers, the corpus and the MCP servers.",
    ),
    "eval": Entry(
        "sleuth.cli.eval",
        "eval_command",
        "Research every question in QUESTIONS (JSON lines: id, prompt, optional gold_sources and key_facts).",
    ),
    "export": Entry("sleuth.cli.reports", "export", "Write a stored report as markdown, PDF or DOCX."),
    "index": Entry(
        "sleuth.cli.index",
        "index",
        "Add DIRECTORY (md, txt, rst, html, pdf files) to the local corpus searched by `local`.",
    ),
    "mcp": Entry(
        "sleuth.cli.mcp",
        "mcp",
        "List the configured MCP servers and their tools, call one tool to try it, or serve Sleuth over MCP.",
    ),
    "narrate": Entry(
        "sleuth.cli.reports", "narrate", "Speak a stored report: read aloud, a short overview, or a two-voice dialogue."
    ),
    "research": Entry("sleuth.cli.research", "research", "Research QUESTION and print a cited report.", preload=True),
    "schedule": Entry(
        "sleuth.cli.schedule",
        "schedule",
        "Ask a question again on a schedule and see what changed: add, list, remove, or run one now.",
    ),
    "schema": Entry(
        "sleuth.cli.schema",
        "schema",
        "Print the JSON Schema of a packet (every `obj` type), or the HTTP API's OpenAPI schema, for other clients.",
    ),
    "serve": Entry("sleuth.cli.serve", "serve", "Run the Sleuth server (API at /api, docs at /docs, web UI at /)."),
    "show": Entry(
        "sleuth.cli.sources",
        "show",
        "Print a document: a local one by id (d_...) or corpus:// URL, or a web page by http(s) URL.",
    ),
    "sources": Entry(
        "sleuth.cli.sources",
        "sources",
        "List every source `--source NAME` accepts: local collections and configured web providers.",
    ),
    "user": Entry(
        "sleuth.cli.user",
        "user",
        "Manage the accounts of SLEUTH_AUTH=accounts: add, list, disable or enable users, set passwords.",
    ),
    "worker": Entry(
        "sleuth.cli.worker",
        "worker",
        "Take runs from the queue and execute them; SIGTERM ends the runs held as interrupted.",
    ),
}


class CommandTable(click.Group):
    """A click group whose commands are the table's, each imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        if entry.preload:
            # Importing the engine and litellm makes hundreds of thousands of objects and no garbage:
            # every collection meanwhile would walk all of them, on both threads' time.
            gc.disable()
        command = getattr(import_module(entry.module), entry.attribute)
        if entry.preload:  # once the engine has imported: both are work for one interpreter lock
            heavy.preload("litellm", then=_resume_collector)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click lists commands, from the table's summaries."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [
            (name, click.Command(name, help=COMMANDS[name].summary).get_short_help_str(limit))
            for name in self.list_commands(ctx)
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=CommandTable)
@click.version_option(package_name="sleuth", prog_name="sleuth")
def main() -> None:
    """Sleuth: deep research with parallel agents and verified citations."""


def _resume_collector() -> None:
    """What has loaded lives as long as the process: frozen, no later collection walks it again."""
    gc.freeze()
    gc.enable()


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
