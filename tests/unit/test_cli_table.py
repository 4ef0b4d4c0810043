"""The CLI's command table: `sleuth --help` lists every command without importing it."""

from __future__ import annotations

import inspect
import subprocess
import sys
from importlib import import_module

import click
import pytest
from click.testing import CliRunner

from sleuth.cli.main import COMMANDS, main


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_summary_is_the_first_paragraph_of_the_commands_own_help(name: str) -> None:
    entry = COMMANDS[name]
    command = getattr(import_module(entry.module), entry.attribute)
    assert isinstance(command, click.Command)
    assert command.name == name
    first_paragraph = " ".join(inspect.cleandoc(command.help or "").split("\n\n")[0].split())
    assert entry.summary == first_paragraph
    assert main.get_command(click.Context(main), name) is command


def test_help_lists_every_command_and_imports_none_of_them() -> None:
    code = (
        "import sys\n"
        "from sleuth.cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('sleuth.cli.') and m != 'sleuth.cli.main'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    help_text, loaded = done.stdout.split("LOADED ")
    assert loaded.strip() == "[]"
    listed = [line.split()[0] for line in help_text.split("Commands:\n")[1].splitlines() if line.strip()]
    assert listed == sorted(COMMANDS)


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["nope"])
    assert result.exit_code == 2
    assert "No such command 'nope'" in result.output
