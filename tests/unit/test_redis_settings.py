"""SLEUTH_REDIS_URL: checked when the settings load, refused without a shared database, never
shown with its password; `sleuth worker` and `sleuth doctor` say what is wrong in one line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sleuth.cli.main import main
from sleuth.config import SettingsError, load_settings
from sleuth.scaleout.streams import entry_id, seq_of
from sleuth_testkit.net import free_port

PG = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.mark.parametrize(
    "url", ["http://:pw-1234@127.0.0.1:6379/0", "redis://:pw-1234@/0", "redis://:pw-1234@127.0.0.1:6379/zero"]
)
def test_a_bad_redis_url_is_one_line_without_its_password(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("SLEUTH_DATABASE_URL", PG)
    monkeypatch.setenv("SLEUTH_REDIS_URL", url)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith("invalid setting SLEUTH_REDIS_URL") and "pw-1234" not in message
    assert "\n" not in message


def test_redis_with_sqlite_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLEUTH_DATABASE_URL", raising=False)  # whichever store the test run uses
    monkeypatch.setenv("SLEUTH_REDIS_URL", "redis://127.0.0.1:6379/0")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert str(caught.value) == (
        "invalid settings: SLEUTH_REDIS_URL needs SLEUTH_DATABASE_URL=postgresql://... "
        "(workers and servers share one database)"
    )


def test_redis_with_postgresql_is_the_distributed_topology(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLEUTH_DATABASE_URL", raising=False)
    assert not load_settings().distributed  # the embedded default
    monkeypatch.setenv("SLEUTH_DATABASE_URL", PG)
    monkeypatch.setenv("SLEUTH_REDIS_URL", "redis://:pw-1234@127.0.0.1:6379/3")
    settings = load_settings()
    assert settings.distributed and "pw-1234" not in repr(settings)


@pytest.mark.parametrize("args", [["worker"], ["serve", "--port", "1"]])
def test_commands_refuse_redis_without_postgresql_in_one_line(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.delenv("SLEUTH_DATABASE_URL", raising=False)
    monkeypatch.setenv("SLEUTH_REDIS_URL", "redis://:pw-1234@127.0.0.1:6379/0")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: invalid settings: SLEUTH_REDIS_URL needs")
    assert "pw-1234" not in result.output


def test_worker_needs_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(main, ["worker"])
    assert result.exit_code == 1
    assert (
        result.output.strip()
        == "Error: sleuth worker needs SLEUTH_REDIS_URL (and SLEUTH_DATABASE_URL=postgresql://...)"
    )


def test_an_unreachable_redis_is_one_line_with_its_password_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEUTH_DATABASE_URL", PG)
    monkeypatch.setenv("SLEUTH_REDIS_URL", f"redis://:pw-1234@127.0.0.1:{free_port()}/0")  # nothing listens there
    result = CliRunner().invoke(main, ["doctor"])
    redis_line = next(line for line in result.output.splitlines() if " redis: " in line)
    assert redis_line.startswith("✗ redis: Redis redis://:[redacted]@127.0.0.1:") and "cannot be reached" in redis_line
    assert "pw-1234" not in result.output and result.exit_code == 1


def test_stream_ids_follow_seqs() -> None:
    # XREAD returns entries strictly after the ID it is given: after seq s is after entry_id(s).
    assert entry_id(-1) == "0-0" and entry_id(0) == "0-1" and entry_id(41) == "0-42"
    assert all(seq_of(entry_id(seq)) == seq for seq in (0, 1, 999, 2**62))
