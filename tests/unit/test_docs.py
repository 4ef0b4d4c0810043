"""docs/configuration.md is generated from `Settings`, so the settings reference cannot drift from the code."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from pydantic import Field

from sleuth.config import Settings
from sleuth.config_docs import env_name, render

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION = ROOT / "docs" / "configuration.md"


def test_the_configuration_page_is_generated_from_the_settings() -> None:
    expected = render()
    actual = CONFIGURATION.read_text(encoding="utf-8") if CONFIGURATION.exists() else ""
    diff = "".join(difflib.unified_diff(actual.splitlines(True), expected.splitlines(True), "committed", "generated"))
    assert actual == expected, f"docs/configuration.md is out of date: run scripts/gen-config-docs\n{diff[:3000]}"


def test_the_configuration_page_lists_every_setting_with_its_default() -> None:
    text = CONFIGURATION.read_text(encoding="utf-8")
    assert f"| `{env_name('max_runs')}` | integer, ≥ 1 | `16` |" in text
    assert f"| `{env_name('mode')}` | `light` or `heavy` | `heavy` |" in text
    for name in Settings.model_fields:
        assert f"| `{env_name(name)}` |" in text, name


def test_a_setting_without_a_description_cannot_be_documented() -> None:
    class Undocumented(Settings):
        mystery_knob_s: float = Field(default=1.0)

    with pytest.raises(ValueError, match="SLEUTH_MYSTERY_KNOB_S has no description"):
        render(Undocumented)
