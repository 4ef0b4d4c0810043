"""SLEUTH_DATABASE_URL: which backend it names, and what a bad one says (never its password)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sleuth.cli.main import main
from sleuth.config import SettingsError, load_settings
from sleuth.core.redaction import redact_url
from sleuth.core.urls import DatabaseUrlError, database_target


def test_unset_or_blank_is_sqlite_under_the_data_dir(tmp_path: Path) -> None:
    for url in (None, "", "  "):
        target = database_target(url, tmp_path)
        assert (target.backend, target.location) == ("sqlite", str(tmp_path / "sleuth.db"))


def test_sqlite_and_postgresql_urls(tmp_path: Path) -> None:
    assert database_target("sqlite:///srv/sleuth/main.db", tmp_path).location == "/srv/sleuth/main.db"
    for scheme in ("postgresql", "postgres"):
        target = database_target(f"{scheme}://sleuth:pw-1234@db.internal:5432/sleuth", tmp_path)
        assert target.backend == "postgresql"
        assert target.describe() == f"{scheme}://sleuth:[redacted]@db.internal:5432/sleuth"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("mysql://u:pw-1234@h/db", "is not sqlite:///"),
        ("postgresql+psycopg://u:pw-1234@h/db", "use postgresql://"),
        ("sqlite://relative.db", "sqlite:///ABSOLUTE/PATH.db"),
        ("postgresql://u:pw-1234@h/db?bogus=1", "cannot be parsed"),
        ("POSTGRESQL://u:pw-1234@h/db", "is not sqlite:///"),
        ("/var/lib/sleuth.db", "is not sqlite:///"),
    ],
)
def test_a_bad_url_says_what_is_expected_without_its_password(url: str, says: str, tmp_path: Path) -> None:
    with pytest.raises(DatabaseUrlError) as caught:
        database_target(url, tmp_path)
    assert says in str(caught.value) and "pw-1234" not in str(caught.value)


def test_redact_url_masks_the_password_and_secret_query_values() -> None:
    url = "postgresql://root:s3cret-pw@127.0.0.1:5432/test?password=other-secret&sslmode=disable"
    redacted = redact_url(url)
    assert "s3cret-pw" not in redacted and "other-secret" not in redacted
    assert redacted.startswith("postgresql://root:[redacted]@127.0.0.1:5432/test?") and "sslmode=disable" in redacted
    assert redact_url("postgresql://root@127.0.0.1/test") == "postgresql://root@127.0.0.1/test"


def test_a_bad_url_is_a_settings_error_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEUTH_DATABASE_URL", "redis://:pw-1234@127.0.0.1:6379/0")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith("invalid setting SLEUTH_DATABASE_URL") and "pw-1234" not in message


@pytest.mark.parametrize("args", [["serve", "--port", "1"], ["research", "a question"], ["export", "rep_x"]])
def test_every_command_refuses_a_bad_url_in_one_line(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.setenv("SLEUTH_DATABASE_URL", "mongodb://u:pw-1234@h/db")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: invalid setting SLEUTH_DATABASE_URL")
    assert "pw-1234" not in result.output
