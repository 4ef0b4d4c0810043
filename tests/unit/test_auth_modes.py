"""SLEUTH_AUTH: which mode a server runs in, and `none` refusing an address others can reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.cli.serve import open_bind_refusal
from sleuth.config import Settings, SettingsError, load_settings
from support.cli import sleuth


def test_the_mode_defaults_to_none_and_to_token_when_a_token_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().auth_mode == "none"
    monkeypatch.setenv("SLEUTH_API_TOKEN", "t0ken")
    assert Settings().auth_mode == "token"  # as before accounts existed
    monkeypatch.setenv("SLEUTH_AUTH", "accounts")
    assert Settings().auth_mode == "accounts"
    monkeypatch.delenv("SLEUTH_API_TOKEN")
    monkeypatch.setenv("SLEUTH_AUTH", "token")
    with pytest.raises(SettingsError, match="SLEUTH_AUTH=token needs SLEUTH_API_TOKEN"):
        load_settings()
    monkeypatch.setenv("SLEUTH_AUTH", "open")
    with pytest.raises(SettingsError, match="SLEUTH_AUTH"):
        load_settings()


def test_secure_cookies_follow_an_https_public_url() -> None:
    assert not Settings().secure_cookies
    assert not Settings(public_url="http://sleuth.lan").secure_cookies
    assert Settings(public_url="https://sleuth.example.org").secure_cookies


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_none_mode_serves_on_loopback(host: str) -> None:
    assert open_bind_refusal(Settings(), host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "sleuth.example.org"])
def test_none_mode_refuses_other_addresses_unless_told_or_authenticated(host: str) -> None:
    refusal = open_bind_refusal(Settings(), host)
    assert refusal is not None and "SLEUTH_ALLOW_UNAUTHENTICATED=1" in refusal
    assert open_bind_refusal(Settings(allow_unauthenticated=True), host) is None
    assert open_bind_refusal(Settings(auth="accounts"), host) is None
    assert open_bind_refusal(Settings(api_token="t0ken"), host) is None


def test_serve_on_a_public_address_without_auth_exits_with_a_message(tmp_path: Path) -> None:
    done = sleuth(["serve", "--host", "0.0.0.0", "--port", "0"], env={}, cwd=tmp_path)
    assert done.returncode == 1
    assert "refusing to serve on 0.0.0.0 without authentication" in done.stderr
    assert "Traceback" not in done.stderr
