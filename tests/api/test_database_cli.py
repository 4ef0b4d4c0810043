"""The CLI and the configured database: `sleuth doctor` names the backend and whether it answers;
`serve`, `research` and `doctor` refuse an unusable database in one line without its password.

Runs in both test passes: with SLEUTH_TEST_DATABASE_URL the commands inherit a PostgreSQL URL."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sleuth_testkit.net import free_port
from support.cli import sleuth


def test_doctor_names_the_backend_that_answers(tmp_path: Path) -> None:
    done = sleuth(["doctor"], {}, tmp_path)
    assert done.returncode == 0, done.stdout
    line = next(line for line in done.stdout.splitlines() if "database:" in line)
    url = os.environ.get("SLEUTH_DATABASE_URL")
    if url:
        assert line.startswith("✓ database: PostgreSQL postgresql://") and " answers " in line
    else:
        assert line.startswith(f"✓ database: SQLite {tmp_path / 'data' / 'sleuth.db'} answers")


@pytest.mark.parametrize("args", [["serve", "--port", "1"], ["research", "--no-clarify", "a question"], ["doctor"]])
def test_an_unreachable_database_is_one_line_without_its_password(tmp_path: Path, args: list[str]) -> None:
    url = f"postgresql://sleuth:pw-never-shown@127.0.0.1:{free_port()}/sleuth"  # nothing listens there
    done = sleuth(args, {"SLEUTH_DATABASE_URL": url}, tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "pw-never-shown" not in done.stdout + done.stderr
    if args[0] == "doctor":
        (line,) = [line for line in done.stdout.splitlines() if line.startswith("✗ ")]
    else:
        (line,) = done.stderr.strip().splitlines()
    assert "PostgreSQL database postgresql://sleuth:[redacted]@127.0.0.1:" in line and "Connection refused" in line
