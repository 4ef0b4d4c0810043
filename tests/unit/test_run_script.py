"""scripts/_env.sh's progress, as `scripts/run` prints it: each step with the time it took, and the
failure of an install with the end of its log. Run by bash on canned input: no install."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bash(script: str, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    # Not a terminal: the progress lines are printed one under another, not rewritten in place.
    return subprocess.run(
        ["bash", "-c", f"source scripts/_env.sh\n{script}"], cwd=ROOT, capture_output=True, text=True, check=check
    )


def test_a_failed_install_shows_the_end_of_its_log_and_where_the_rest_is(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    fake_uv = venv / "bin" / "uv"
    fake_uv.write_text(
        "#!/bin/sh\nfor n in $(seq 1 40); do echo \"line $n\"; done\necho 'no matching distribution' >&2\nexit 1\n"
    )
    fake_uv.chmod(0o755)
    done = _bash(f'VENV="{venv}"; _uv -e "."; echo "not reached"', check=False)
    assert done.returncode == 1 and "not reached" not in done.stdout
    err = done.stderr.splitlines()
    assert err[-2] == "no matching distribution" and "line 1" not in err and "line 40" in err
    assert err[-1] == f"installing Python packages failed (uv's whole output: {venv}/uv.log)"
    assert (venv / "uv.log").read_text().startswith("line 1\n")


def test_a_step_says_what_it_does_then_how_long_it_took() -> None:
    out = _bash(
        'step "Building the web UI"; step_done built; '
        'SHOW_SKIPPED=; step_skipped "hidden"; SHOW_SKIPPED=1; step_skipped "Web UI: up to date"'
    ).stdout
    lines = out.splitlines()
    assert lines[0] == "==> Building the web UI"
    assert re.fullmatch(r"    built in \d+\.\d s", lines[1])
    assert lines[2:] == ["==> Web UI: up to date"]  # a skipped step shows only when asked
