"""`/api/health` names the server's SLEUTH_AUTH mode, without a credential: the web UI learns from it
whether a caller it cannot authenticate is asked for the shared token or to sign in."""

from __future__ import annotations

import httpx
import pytest

from conftest import live_server
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM


@pytest.mark.parametrize(
    ("overrides", "mode"),
    [({}, "none"), ({"api_token": "s3cret-token-value"}, "token"), ({"auth": "accounts"}, "accounts")],
)
async def test_health_names_the_auth_mode_to_a_caller_without_credentials(
    llm: ScriptedLLM, overrides: dict[str, str], mode: str
) -> None:
    with live_server(scripted_settings(llm, **overrides)) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as anon:
            health = await anon.get("/api/health")
            me = await anon.get("/api/auth/me")
    assert health.status_code == 200 and health.json()["auth"] == mode
    assert me.status_code == (200 if mode == "none" else 401)
