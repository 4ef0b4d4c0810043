"""SLEUTH_AUTH=accounts over HTTP: signing in and out, CSRF, API keys, the sign-in limit, and what
ends a user's access at once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conftest import LiveServer, live_server
from sleuth.accounts.service import Accounts
from sleuth_testkit.clock import ManualClock
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM

PASSWORD = "alice's long password"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def accounts_server(llm: ScriptedLLM, clock: ManualClock) -> Iterator[LiveServer]:
    settings = scripted_settings(llm, auth="accounts", login_max_failures=3, login_window_s=60)
    with live_server(settings, clock=clock) as live:
        accounts(live).add_user("alice", PASSWORD, admin=False)
        accounts(live).add_user("bob", PASSWORD + " too", admin=False)
        yield live


def accounts(live: LiveServer) -> Accounts:
    found: Accounts = live.app_state.accounts
    return found


async def sign_in(client: httpx.AsyncClient, name: str = "alice", password: str = PASSWORD) -> str:
    """Sign `client` in (its cookie jar keeps the cookies); returns the CSRF token."""
    response = await client.post("/api/auth/login", json={"username": name, "password": password})
    assert response.status_code == 200, response.text
    csrf = response.json()["csrf_token"]
    assert csrf == client.cookies["sleuth_csrf"]
    return str(csrf)


async def test_sign_in_sets_an_http_only_cookie_and_a_csrf_cookie(accounts_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as client:
        unsigned = await client.get("/api/sessions")
        assert unsigned.status_code == 401 and unsigned.json() == {
            "detail": "sign in (POST /api/auth/login) or send an API key as a bearer token"
        }
        response = await client.post("/api/auth/login", json={"username": "alice", "password": PASSWORD})
        assert response.status_code == 200
        assert response.json()["name"] == "alice" and response.json()["auth"] == "accounts"
        cookies = {c.split("=", 1)[0]: c.lower() for c in response.headers.get_list("set-cookie")}
        assert "httponly" in cookies["sleuth_session"] and "samesite=lax" in cookies["sleuth_session"]
        assert "httponly" not in cookies["sleuth_csrf"] and "samesite=lax" in cookies["sleuth_csrf"]
        assert "secure" not in cookies["sleuth_session"]  # no https public URL
        csrf = response.json()["csrf_token"]

        me = await client.get("/api/auth/me")
        assert me.status_code == 200 and me.json()["name"] == "alice" and me.json()["csrf_token"] == csrf
        assert me.json()["has_password"] is True
        refused = await client.post("/api/sessions", json={"title": "t"})
        assert refused.status_code == 403 and "X-CSRF-Token" in refused.json()["detail"]
        wrong = await client.post("/api/sessions", json={"title": "t"}, headers={"X-CSRF-Token": "0" * 64})
        assert wrong.status_code == 403
        created = await client.post("/api/sessions", json={"title": "t"}, headers={"X-CSRF-Token": csrf})
        assert created.status_code == 201
        async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as other_device:
            await sign_in(other_device)
            assert (await other_device.get("/api/auth/me")).status_code == 200
            assert (await client.post("/api/auth/logout")).status_code == 403
            assert (await client.post("/api/auth/logout", headers={"X-CSRF-Token": csrf})).status_code == 204
            assert (await other_device.get("/api/auth/me")).status_code == 401  # signing out ends them all
        assert "sleuth_session" not in client.cookies
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as replay:
        replay.cookies.set("sleuth_session", response.cookies["sleuth_session"])
        assert (await replay.get("/api/auth/me")).status_code == 401  # the server ended it, not only the browser


async def test_a_wrong_name_and_a_wrong_password_answer_alike(accounts_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as client:
        wrong_password = await client.post("/api/auth/login", json={"username": "alice", "password": "nope"})
        no_user = await client.post("/api/auth/login", json={"username": "mallory", "password": "nope"})
    assert wrong_password.status_code == no_user.status_code == 401
    assert wrong_password.json() == no_user.json() == {"detail": "wrong user name or password"}


async def test_failed_sign_ins_are_limited_until_the_window_passes(
    accounts_server: LiveServer, clock: ManualClock
) -> None:
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as client:
        for _ in range(3):
            assert (
                await client.post("/api/auth/login", json={"username": "alice", "password": "x"})
            ).status_code == 401
        held = await client.post("/api/auth/login", json={"username": "alice", "password": PASSWORD})
        assert held.status_code == 429 and held.headers["retry-after"] == "60"
        assert held.json() == {"detail": "too many failed sign-ins; try again later"}
        clock.t += 60
        assert (
            await client.post("/api/auth/login", json={"username": "alice", "password": PASSWORD})
        ).status_code == 200


async def test_secure_cookies_behind_an_https_public_url(llm: ScriptedLLM) -> None:
    settings = scripted_settings(llm, auth="accounts", public_url="https://sleuth.example.org")
    with live_server(settings) as live:
        accounts(live).add_user("alice", PASSWORD, admin=False)
        async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as client:
            response = await client.post("/api/auth/login", json={"username": "alice", "password": PASSWORD})
    assert all("secure" in c.lower() for c in response.headers.get_list("set-cookie"))


async def _new_key(client: httpx.AsyncClient, csrf: str, **body: Any) -> dict[str, Any]:
    response = await client.post("/api/keys", json={"name": "script", **body}, headers={"X-CSRF-Token": csrf})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def test_api_keys_are_shown_once_and_work_as_bearer_tokens_until_deleted(accounts_server: LiveServer) -> None:
    base = accounts_server.base_url
    async with httpx.AsyncClient(base_url=base, timeout=30) as browser:
        csrf = await sign_in(browser)
        created = await _new_key(browser, csrf, expires_in_days=30)
        key = created["key"]
        assert key.startswith("sk_sleuth_") and created["expires_at"] and created["last_used_at"] is None
        listed = (await browser.get("/api/keys")).json()
        assert [k["id"] for k in listed] == [created["id"]] and "key" not in listed[0]
    async with httpx.AsyncClient(base_url=base, timeout=30, headers={"Authorization": f"Bearer {key}"}) as script:
        assert (await script.get("/api/auth/me")).json()["name"] == "alice"
        assert (await script.post("/api/sessions", json={"title": "no csrf needed"})).status_code == 201
        assert (await script.get("/api/keys")).json()[0]["last_used_at"] is not None
        assert (await script.delete(f"/api/keys/{created['id']}")).status_code == 204
        gone = await script.get("/api/sessions")
        assert gone.status_code == 401 and gone.json()["detail"] == "invalid, expired or revoked API key"
    async with httpx.AsyncClient(base_url=base, timeout=30) as anon:
        for wrong in ("sk_sleuth_not-a-key", "not even the prefix"):
            response = await anon.get("/api/sessions", headers={"Authorization": f"Bearer {wrong}"})
            assert response.status_code == 401


async def test_a_disabled_user_loses_sign_ins_and_keys_at_once(accounts_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as browser:
        csrf = await sign_in(browser)
        key = (await _new_key(browser, csrf))["key"]
        assert (await browser.get("/api/sessions")).status_code == 200
        accounts(accounts_server).disable("alice")
        assert (await browser.get("/api/sessions")).status_code == 401
        by_key = await browser.get("/api/sessions", headers={"Authorization": f"Bearer {key}"})
        assert by_key.status_code == 401
        again = await browser.post("/api/auth/login", json={"username": "alice", "password": PASSWORD})
        assert again.status_code == 401 and again.json() == {"detail": "wrong user name or password"}


async def test_a_password_change_ends_the_other_sign_ins_and_keeps_this_one(accounts_server: LiveServer) -> None:
    base = accounts_server.base_url
    async with httpx.AsyncClient(base_url=base, timeout=30) as here, httpx.AsyncClient(base_url=base) as there:
        csrf = await sign_in(here)
        await sign_in(there)
        change = {"current_password": PASSWORD, "new_password": "a brand new password"}
        wrong = await here.post(
            "/api/auth/password", json={**change, "current_password": "nope"}, headers={"X-CSRF-Token": csrf}
        )
        assert wrong.status_code == 401
        weak = await here.post(
            "/api/auth/password", json={**change, "new_password": "short"}, headers={"X-CSRF-Token": csrf}
        )
        assert weak.status_code == 422 and "at least 8" in weak.json()["detail"]
        assert (await here.post("/api/auth/password", json=change, headers={"X-CSRF-Token": csrf})).status_code == 204
        assert (await here.get("/api/auth/me")).status_code == 200
        assert (await there.get("/api/auth/me")).status_code == 401
        login = {"username": "alice", "password": "a brand new password"}
        assert (await there.post("/api/auth/login", json=login)).status_code == 200


async def test_no_password_or_key_is_stored_or_logged_in_the_clear(accounts_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as client:
        csrf = await sign_in(client)
        key = (await _new_key(client, csrf))["key"]
        await client.get("/api/sessions", headers={"Authorization": f"Bearer {key}"})
        await client.post("/api/auth/login", json={"username": "bob", "password": "bob's wrong password"})
        session_cookie = client.cookies["sleuth_session"]
    database = accounts_server.database
    stored = "\n".join(
        str(database.fetch_all(f"SELECT * FROM {table}", ())) for table in ("users", "auth_sessions", "api_keys")
    )
    accounts_server.server.should_exit = True
    accounts_server.thread.join(15)  # access lines are written once each response has ended
    log = (accounts_server.settings.data_dir / "logs" / "sleuth.jsonl").read_text()
    for secret in (PASSWORD, "bob's wrong password", key, session_cookie):
        assert secret not in stored and secret not in log


async def test_without_accounts_the_caller_is_the_built_in_user_and_accounts_routes_say_so(
    server: LiveServer,
) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        me = await client.get("/api/auth/me")
        assert me.json() == {
            "name": "local",
            "is_admin": True,
            "auth": "none",
            "has_password": False,
            "csrf_token": None,
        }
        login = await client.post("/api/auth/login", json={"username": "a", "password": "b"})
        assert login.status_code == 404 and "SLEUTH_AUTH=accounts" in login.json()["detail"]
        assert (await client.get("/api/keys")).status_code == 404
        assert (await client.post("/api/sessions", json={"title": "t"})).status_code == 201  # no CSRF: no cookie


async def test_administrators_list_users_and_their_usage_and_no_one_else_does(accounts_server: LiveServer) -> None:
    accounts(accounts_server).add_user("root", PASSWORD, admin=True)
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as client:
        await sign_in(client, "alice")
        refused = await client.get("/api/admin/users")
        assert refused.status_code == 403 and refused.json() == {"detail": "administrators only"}
        await sign_in(client, "root")
        listed = (await client.get("/api/admin/users")).json()
    assert [(u["name"], u["is_admin"], u["sessions"], u["runs"]) for u in listed] == [
        ("alice", False, 0, 0),
        ("bob", False, 0, 0),
        ("root", True, 0, 0),
    ]


async def test_with_accounts_every_user_uploads_into_their_own_collections(accounts_server: LiveServer) -> None:
    accounts(accounts_server).add_user("root", PASSWORD, admin=True)
    note = {"files": ("okapi.md", b"# Okapi\n\nThe okapi is shy.\n", "text/markdown")}
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=60) as client:
        csrf = await sign_in(client, "alice")
        added = await client.post("/api/collections/notes/documents", files=note, headers={"X-CSRF-Token": csrf})
        assert added.status_code == 201, added.text
        mine = {c["name"]: c for c in (await client.get("/api/collections")).json()}
        assert (mine["notes"]["visibility"], mine["notes"]["editable"]) == ("private", True)
        refused = await client.post("/api/collections/notes/share", headers={"X-CSRF-Token": csrf})
        assert refused.status_code == 403 and refused.json() == {"detail": "administrators only"}
        csrf = await sign_in(client, "root")
        assert "notes" not in [c["name"] for c in (await client.get("/api/collections")).json()]
        shared = await client.post("/api/collections/notes/share", headers={"X-CSRF-Token": csrf})
        assert shared.status_code == 200 and shared.json()["visibility"] == "shared"
        await sign_in(client, "bob", PASSWORD + " too")
        listed = {c["name"]: c for c in (await client.get("/api/collections")).json()}
        assert (listed["notes"]["visibility"], listed["notes"]["editable"]) == ("shared", False)


async def test_the_access_log_names_the_user_of_each_request(accounts_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=30) as client:
        await sign_in(client)
        await client.get("/api/sessions")
        await client.get("/api/sessions", headers={"Authorization": "Bearer sk_sleuth_wrong"})
    accounts_server.server.should_exit = True
    accounts_server.thread.join(15)  # access lines are written once each response has ended
    log = (accounts_server.settings.data_dir / "logs" / "sleuth.jsonl").read_text()
    lines = [json.loads(line) for line in log.splitlines()]
    sessions = [(line["status"], line["user"]) for line in lines if line.get("path") == "/api/sessions"]
    assert sessions == [(200, "alice"), (401, None)]
