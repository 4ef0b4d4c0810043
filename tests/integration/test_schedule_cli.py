"""`sleuth schedule add|list|remove` as a user runs them; bad timings are one line and a non-zero exit."""

from __future__ import annotations

import re
from pathlib import Path

from support.cli import sleuth


def test_add_list_and_remove(tmp_path: Path) -> None:
    env = {"SLEUTH_DATA_DIR": str(tmp_path / "data")}
    added = sleuth(
        ["schedule", "add", "What changed in X?", "--cron", "0 7 * * 1-5", "--tz", "Europe/Berlin"], env, tmp_path
    )
    assert added.returncode == 0, added.stderr
    schedule_id = re.match(r"(sch_\w+)  next due (\S+)", added.stdout)
    assert schedule_id is not None and schedule_id.group(2)[11:16] in ("05:00", "06:00")
    every = sleuth(
        ["schedule", "add", "Q2", "--every", "6h", "--webhook", "https://hooks.example.com/x"], env, tmp_path
    )
    assert "webhook secret (shown once): " in every.stdout
    listed = sleuth(["schedule", "list"], env, tmp_path)
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert len(lines) == 2 and "cron '0 7 * * 1-5' Europe/Berlin  never fired  What changed in X?" in lines[0]
    assert "every 6h" in lines[1]
    removed = sleuth(["schedule", "remove", schedule_id.group(1)], env, tmp_path)
    again = sleuth(["schedule", "remove", schedule_id.group(1)], env, tmp_path)
    assert removed.returncode == 0 and again.returncode == 1 and "no schedule" in again.stderr
    assert len(sleuth(["schedule", "list"], env, tmp_path).stdout.splitlines()) == 1


def test_bad_timings_are_one_line_and_exit_1(tmp_path: Path) -> None:
    env = {"SLEUTH_DATA_DIR": str(tmp_path / "data")}
    cases = [
        (["--cron", "0 7 * *"], "cron: '0 7 * *' is not a cron expression"),
        (["--cron", "0 7 * * *", "--tz", "Moon/Base"], "timezone: 'Moon/Base' is not an IANA time zone"),
        (["--every", "10s"], "shorter than the shortest interval"),
        ([], "give either cron"),
        (["--every", "1h", "--webhook", "http://10.0.0.5/hook"], "webhook_url: refused: 10.0.0.5 is a private address"),
    ]
    for options, says in cases:
        done = sleuth(["schedule", "add", "Q", *options], env, tmp_path)
        assert done.returncode == 1, (options, done.stdout)
        assert says in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert sleuth(["schedule", "list"], env, tmp_path).stdout.startswith("No schedules")
