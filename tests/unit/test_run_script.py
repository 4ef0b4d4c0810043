"""scripts/_env.sh's progress, as `scripts/run` prints it: pip's output as a count of packages (the
whole of it in a log), and each step with the time it took. Run by bash on canned input: no install."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PIP_OUTPUT = "\n".join(
    [
        "Obtaining file:///src/sleuth",
        *(f"Collecting package{n}>=1.0 (from sleuth==0.1.0)" for n in range(1, 13)),
        "  Downloading package12-1.0-py3-none-any.whl (10 kB)",
        "Installing collected packages: package1, package2",
        "Successfully installed package1-1.0 package2-1.0",
    ]
)


def _bash(script: str, stdin: str = "") -> str:
    # Not a terminal: the progress lines are printed one under another, not rewritten in place.
    done = subprocess.run(
        ["bash", "-c", f"source scripts/_env.sh\n{script}"],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_pip_output_becomes_a_count_of_packages_and_the_whole_of_it_goes_to_the_log(tmp_path: Path) -> None:
    log = tmp_path / "pip.log"
    out = _bash(f'pip_progress "{log}"', PIP_OUTPUT)
    assert out.splitlines() == [
        "    collecting packages: 1 (package1>=1.0)",
        "    collecting packages: 11 (package11>=1.0)",
        "    installing 12 packages ...",
    ]
    assert log.read_text() == PIP_OUTPUT + "\n"


def test_a_step_says_what_it_does_then_how_long_it_took() -> None:
    out = _bash(
        'step "Building the web UI"; step_done built; '
        'SHOW_SKIPPED=; step_skipped "hidden"; SHOW_SKIPPED=1; step_skipped "Web UI: up to date"'
    )
    lines = out.splitlines()
    assert lines[0] == "==> Building the web UI"
    assert re.fullmatch(r"    built in \d+\.\d s", lines[1])
    assert lines[2:] == ["==> Web UI: up to date"]  # a skipped step shows only when asked
