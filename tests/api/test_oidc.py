"""Single sign-on with OpenID Connect, against a mock provider on loopback: the whole browser round
trip (Sleuth -> provider -> Sleuth's callback) over real sockets, and every way it must refuse: to an
API client with a status and a JSON `detail`, to a browser by sending it back to the sign-in page
with a reason code."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from conftest import LiveServer, live_server
from sleuth.accounts.service import Accounts
from sleuth.config import Settings
from sleuth.store.accounts import UserRecord
from sleuth_testkit.oidc_provider import MockProvider

PASSWORD = "a long enough password"
BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # a navigation's


@pytest.fixture
def provider() -> Iterator[MockProvider]:
    with MockProvider() as mock:
        yield mock


def sso_settings(provider: MockProvider, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "auth": "accounts",
        "oidc_issuer": provider.issuer,
        "oidc_client_id": provider.client_id,
        "oidc_client_secret": provider.client_secret,
        "oidc_name": "Mock IdP",
    }
    return Settings(**{**values, **overrides})


@pytest.fixture
def server(provider: MockProvider) -> Iterator[LiveServer]:
    with live_server(sso_settings(provider, oidc_admin_emails="boss@example.org")) as live:
        yield live


def accounts(live: LiveServer) -> Accounts:
    found: Accounts = live.app_state.accounts
    return found


def users(live: LiveServer) -> dict[str, UserRecord]:
    return {user.name: user for user in accounts(live).users()}


def sign_ins(live: LiveServer) -> int:
    return int(live.database.fetch_one("SELECT COUNT(*) AS n FROM auth_sessions", ())["n"])


async def sso(
    client: httpx.AsyncClient, *, tamper_state: bool = False, codes: list[str] | None = None
) -> httpx.Response:
    """The browser's round trip, one redirect at a time: Sleuth's login, the provider's authorize,
    then Sleuth's callback, whose answer is returned. `codes` gets the authorization code."""
    start = await client.get("/api/auth/oidc/login")
    assert start.status_code == 302, start.text
    approved = await client.get(start.headers["location"])
    assert approved.status_code == 302, approved.text
    callback = approved.headers["location"]
    if codes is not None:
        codes.extend(parse_qs(urlsplit(callback).query)["code"])
    if tamper_state:
        url = urlsplit(callback)
        query = {name: values[0] for name, values in parse_qs(url.query).items()}
        callback = url._replace(query=urlencode({**query, "state": "a-state-this-browser-never-had"})).geturl()
    return await client.get(callback)


async def test_sign_in_creates_the_user_and_the_cookie_works(server: LiveServer, provider: MockProvider) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        health = (await client.get("/api/health")).json()
        assert health["sso"] == {"name": "Mock IdP", "login_url": "/api/auth/oidc/login"}
        assert (await client.get("/api/auth/me")).status_code == 401

        start = await client.get("/api/auth/oidc/login")
        to_provider = urlsplit(start.headers["location"])
        query = parse_qs(to_provider.query)
        assert f"{to_provider.scheme}://{to_provider.netloc}" == provider.issuer
        assert query["code_challenge_method"] == ["S256"] and query["state"] and query["nonce"]
        assert query["redirect_uri"] == [f"{server.base_url}/api/auth/oidc/callback"]
        assert "sleuth_session" not in client.cookies

        codes: list[str] = []
        done = await sso(client, codes=codes)
        assert done.status_code == 303 and done.headers["location"] == "/"
        assert provider.token_requests == 1  # the code was exchanged (PKCE checked by the provider)

        me = await client.get("/api/auth/me")
        assert me.status_code == 200, me.text
        assert me.json()["name"] == "ada" and me.json()["auth"] == "accounts" and not me.json()["is_admin"]
        assert me.json()["has_password"] is False  # made by single sign-on: the UI offers no password change
        csrf = me.json()["csrf_token"]
        assert csrf and csrf == client.cookies["sleuth_csrf"]
        assert (
            await client.post("/api/sessions", json={"title": "t"}, headers={"X-CSRF-Token": csrf})
        ).status_code == 201

    ada = users(server)["ada"]
    assert (ada.oidc_issuer, ada.oidc_subject, ada.email) == (provider.issuer, "user-1", "ada@example.org")
    assert ada.password_hash is None  # no password: a password sign-in as ada fails

    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as again:
        assert (await sso(again)).status_code == 303
        assert (await again.get("/api/auth/me")).json()["name"] == "ada"
    assert list(users(server)) == ["ada"]  # the same account, linked by (issuer, subject)
    log = (server.settings.data_dir / "logs" / "sleuth.jsonl").read_text()
    assert "/api/auth/oidc/callback" in log and codes[0] not in log  # the access log redacts it


async def test_a_taken_name_is_made_unique_and_admin_emails_make_administrators(
    server: LiveServer, provider: MockProvider
) -> None:
    accounts(server).add_user("ada", PASSWORD, admin=False)
    provider.account = {
        "sub": "user-9",
        "email": "boss@example.org",
        "email_verified": True,
        "preferred_username": "ada",
    }
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        assert (await sso(client)).status_code == 303
        me = (await client.get("/api/auth/me")).json()
    assert me["name"] == "ada-2" and me["is_admin"] is True


async def test_a_verified_email_links_the_existing_account(server: LiveServer, provider: MockProvider) -> None:
    accounts(server).add_user("carol", PASSWORD, admin=False, email="Carol@Example.org")
    provider.account = {"sub": "c-1", "email": "carol@example.org", "email_verified": True}
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        assert (await sso(client)).status_code == 303
        assert (await client.get("/api/auth/me")).json()["name"] == "carol"
    assert users(server)["carol"].oidc_subject == "c-1" and list(users(server)) == ["carol"]


def refused_page(answer: httpx.Response, code: str) -> None:
    """A browser is sent back to the web UI's sign-in page, told `code` and nothing else."""
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/#/signin?sso_error={code}"
    assert "sleuth_session" not in answer.cookies


async def refused(live: LiveServer, status: int, words: str, code: str, *, tamper_state: bool = False) -> None:
    """The sign-in is refused with `status` and a message holding `words` to an API client, and to a
    browser with the sign-in page and `code`; no sign-in exists after either."""
    async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as client:
        answer = await sso(client, tamper_state=tamper_state)
        assert answer.status_code == status, answer.text
        assert words in answer.json()["detail"]
        assert "sleuth_session" not in client.cookies and "sleuth_csrf" not in client.cookies
        assert (await client.get("/api/auth/me")).status_code == 401
    async with httpx.AsyncClient(base_url=live.base_url, timeout=30, headers=BROWSER) as browser:
        refused_page(await sso(browser, tamper_state=tamper_state), code)
        assert "sleuth_session" not in browser.cookies and "sleuth_oidc_flow" not in browser.cookies
    assert sign_ins(live) == 0


async def test_a_wrong_nonce_is_refused(server: LiveServer, provider: MockProvider) -> None:
    provider.overrides = {"nonce": "a-nonce-from-another-sign-in"}
    await refused(server, 400, "failed verification: Invalid claim: 'nonce'", "token_invalid")
    assert users(server) == {}


async def test_a_token_without_the_nonce_is_refused(server: LiveServer, provider: MockProvider) -> None:
    provider.overrides = {"nonce": None}
    await refused(server, 400, "Missing claim: 'nonce'", "token_invalid")


async def test_a_token_signed_with_another_key_is_refused(server: LiveServer, provider: MockProvider) -> None:
    provider.forge = True
    await refused(server, 400, "failed verification", "token_invalid")
    assert users(server) == {}


async def test_a_token_from_another_issuer_is_refused(server: LiveServer, provider: MockProvider) -> None:
    provider.overrides = {"iss": "http://127.0.0.1:1/another-issuer"}
    await refused(server, 400, "Invalid claim: 'iss'", "token_invalid")


async def test_a_token_for_another_client_is_refused(server: LiveServer, provider: MockProvider) -> None:
    provider.overrides = {"aud": "another-client"}
    await refused(server, 400, "Invalid claim: 'aud'", "token_invalid")


async def test_an_expired_token_is_refused(server: LiveServer, provider: MockProvider) -> None:
    provider.overrides = {"exp": 1_000_000, "iat": 999_000}
    await refused(server, 400, "expired", "token_invalid")


async def test_a_wrong_state_is_refused_before_the_code_is_used(server: LiveServer, provider: MockProvider) -> None:
    await refused(server, 400, "state does not match", "state_mismatch", tamper_state=True)
    assert provider.token_requests == 0


async def test_a_sign_in_the_provider_refused_is_refused(server: LiveServer, provider: MockProvider) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        start = await client.get("/api/auth/oidc/login")
        state = parse_qs(urlsplit(start.headers["location"]).query)["state"][0]
        answer = await client.get("/api/auth/oidc/callback", params={"error": "access_denied", "state": state})
        assert (
            answer.status_code == 400 and answer.json()["detail"] == "the provider did not sign you in (access_denied)"
        )
        assert "sleuth_session" not in client.cookies and "sleuth_oidc_flow" not in client.cookies
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30, headers=BROWSER) as browser:
        start = await browser.get("/api/auth/oidc/login")
        state = parse_qs(urlsplit(start.headers["location"]).query)["state"][0]
        said = "<img src=x onerror=alert(1)>"  # what the provider says goes no further than the log
        refused_page(
            await browser.get("/api/auth/oidc/callback", params={"error": said, "state": state}), "provider_refused"
        )
    assert provider.token_requests == 0 and sign_ins(server) == 0


async def test_a_callback_without_the_flow_cookie_is_refused(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        answer = await client.get("/api/auth/oidc/callback", params={"code": "c", "state": "s"})
        assert answer.status_code == 400 and "sign in again" in answer.json()["detail"]
        refused_page(await client.get("/api/auth/oidc/callback", params={"code": "c"}, headers=BROWSER), "expired")
        forged = "eyJzdGF0ZSI6InMifQ.AAAA"
        client.cookies.set("sleuth_oidc_flow", forged, path="/api/auth/oidc")
        answer = await client.get("/api/auth/oidc/callback", params={"code": "c", "state": "s"})
        assert answer.status_code == 400 and "sign in again" in answer.json()["detail"]


async def test_an_unverified_email_takes_over_no_account(server: LiveServer, provider: MockProvider) -> None:
    accounts(server).add_user("carol", PASSWORD, admin=True, email="carol@example.org")
    provider.account = {"sub": "mallory", "email": "carol@example.org", "email_verified": False}
    await refused(server, 403, "does not say the address is verified", "email_taken_unverified")
    carol = users(server)["carol"]
    assert carol.oidc_subject is None and list(users(server)) == ["carol"]


async def test_an_email_outside_the_allowed_domains_is_refused(provider: MockProvider) -> None:
    with live_server(sso_settings(provider, oidc_allowed_domains="example.org, @corp.example")) as live:
        provider.account = {"sub": "eve", "email": "eve@elsewhere.net", "email_verified": True}
        await refused(live, 403, "elsewhere.net may not sign in", "domain_not_allowed")
        provider.account = {"sub": "eve", "email": "eve@example.org", "email_verified": False}
        await refused(live, 403, "did not confirm a verified e-mail", "email_not_verified")
        assert users(live) == {}
        provider.account = {"sub": "dee", "email": "dee@corp.example", "email_verified": True}
        async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as client:
            assert (await sso(client)).status_code == 303


async def test_a_disabled_user_cannot_sign_in(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        assert (await sso(client)).status_code == 303
        accounts(server).disable("ada")
        assert (await client.get("/api/auth/me")).status_code == 401
    server.database.execute("DELETE FROM auth_sessions", ())
    await refused(server, 403, "disabled", "disabled")


async def test_without_single_sign_on_the_routes_answer_404(tmp_path: Any) -> None:
    with live_server(Settings(auth="accounts")) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as client:
            assert (await client.get("/api/health")).json()["sso"] is None
            answer = await client.get("/api/auth/oidc/login")
            assert answer.status_code == 404 and "SLEUTH_OIDC_ISSUER" in answer.json()["detail"]
            refused_page(await client.get("/api/auth/oidc/login", headers=BROWSER), "not_configured")


async def test_a_provider_that_cannot_be_reached_is_the_providers_fault(provider: MockProvider) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # a port nothing listens on
        issuer = f"http://127.0.0.1:{closed.getsockname()[1]}/realms/gone"
        with live_server(sso_settings(provider, oidc_issuer=issuer)) as live:
            async with httpx.AsyncClient(base_url=live.base_url, timeout=30) as client:
                answer = await client.get("/api/auth/oidc/login")
                assert answer.status_code == 502 and "cannot be reached" in answer.json()["detail"]
                refused_page(await client.get("/api/auth/oidc/login", headers=BROWSER), "provider_unavailable")
