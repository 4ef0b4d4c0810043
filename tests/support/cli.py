"""Run a `sleuth` command: in this process, as most tests do, or as a user does, in a subprocess.

In this process (`sleuth`) the command's own click function runs under click's test runner, with
the environment given for its length: what it prints, its exit code and its stack trace (printed to
stderr, as the interpreter would) without paying a new interpreter's start-up (the engine's imports,
litellm's above all) per call. A subprocess (`sleuth_subprocess`) is for what only a process shows:
the console script's own exit, and a clean stdout with nothing else of the process on it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

import click
from click.testing import CliRunner

from sleuth.cli.main import COMMANDS


@dataclass(frozen=True)
class Done:
    """What a finished command left: as `subprocess.CompletedProcess` has it."""

    returncode: int
    stdout: str
    stderr: str


def sleuth(args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> Done:
    """`sleuth ARGS` in this process, in `cwd`, with `env` added to the environment while it runs
    (and `stdin` as its input).

    The command is called by its table entry, not through the group: the group's start of a
    litellm preload is the console script's business (tests/unit/test_startup.py)."""
    name, *rest = args
    entry = COMMANDS[name]
    command = getattr(import_module(entry.module), entry.attribute)
    assert isinstance(command, click.Command)
    before = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(command, rest, input=stdin, env=env, prog_name=f"sleuth {name}")
    finally:
        os.chdir(before)
    stderr = result.stderr
    if result.exc_info is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*result.exc_info))  # as the interpreter prints it
    return Done(result.exit_code, result.stdout, stderr)


def sleuth_subprocess(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sleuth", *args],
        env={**os.environ, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
