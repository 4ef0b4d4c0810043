"""Run the `sleuth` command as a user does: a subprocess with its own environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def sleuth(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sleuth", *args],
        env={**os.environ, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
