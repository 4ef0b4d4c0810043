"""One settings loader for every command: a bad setting is one readable line and exit 1."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sleuth.cli.main import main
from sleuth.config import SettingsError, load_settings


@pytest.mark.parametrize("args", [["serve", "--port", "1"], ["index", "--list"], ["research", "a question"]])
def test_every_command_reports_a_bad_setting_in_one_line(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.setenv("SLEUTH_MAX_PARALLEL_AGENTS", "9")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines == ["Error: invalid setting SLEUTH_MAX_PARALLEL_AGENTS: Input should be less than or equal to 3"]


def test_the_message_counts_further_errors_and_never_shows_a_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEUTH_MAX_RUNS", "sk-secret-value")
    monkeypatch.setenv("SLEUTH_HEARTBEAT_S", "0")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith("invalid setting SLEUTH_") and message.endswith("(and 1 more)")
    assert "sk-secret-value" not in message and "\n" not in message


def test_good_settings_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEUTH_MAX_PARALLEL_AGENTS", "2")
    assert load_settings().max_parallel_agents == 2
