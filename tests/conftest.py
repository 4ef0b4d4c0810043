"""Shared fixtures: isolated settings and data dir, offline-safe litellm, the scripted LLM."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's .env or ~/.sleuth."""
    for key in list(os.environ):
        if key.startswith("SLEUTH_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("SLEUTH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
