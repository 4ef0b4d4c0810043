"""A mock OpenID Connect provider for tests, served by uvicorn on 127.0.0.1 (a pre-bound port 0) in a
thread of the test's process.

It has a discovery document, a JWKS (an RSA key made when it starts), `/authorize` (approves at
once: back to the redirect URI with a code and the state) and `/token` (checks the client's secret,
the redirect URI and the PKCE verifier, then answers with an RS256 ID token). The ID token's claims
are the `account`'s plus the request's nonce; `overrides` changes them for every token from then on
(a wrong nonce, issuer or audience, an unverified e-mail), and `forge` signs them with a key that is
not the published one.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import uvicorn
from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

KEY_ID = "mock-key-1"


@dataclass
class _Grant:
    redirect_uri: str
    nonce: str | None
    code_challenge: str


@dataclass
class MockProvider:
    client_id: str = "sleuth-test"
    client_secret: str = "mock-client-secret"
    account: dict[str, Any] = field(
        default_factory=lambda: {
            "sub": "user-1",
            "email": "ada@example.org",
            "email_verified": True,
            "preferred_username": "ada",
        }
    )
    overrides: dict[str, Any] = field(default_factory=dict)  # claims to change (None: leave out)
    forge: bool = False  # sign ID tokens with another key under the published key's id
    port: int = 0
    token_requests: int = 0

    def __post_init__(self) -> None:
        self._key = RSAKey.generate_key(2048, parameters={"kid": KEY_ID, "use": "sig", "alg": "RS256"})
        self._grants: dict[str, _Grant] = {}
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- lifetime -------------------------------------------------------------------------------

    def __enter__(self) -> MockProvider:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        app = Starlette(
            routes=[
                Route("/.well-known/openid-configuration", self._discovery),
                Route("/jwks", self._jwks),
                Route("/authorize", self._authorize),
                Route("/token", self._token, methods=["POST"]),
            ]
        )
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="mock-oidc", daemon=True
        )
        self._thread.start()
        while not self._server.started and self._thread.is_alive():
            self._thread.join(0.01)  # uvicorn has no "started" callback; a failed start ends the thread
        if not self._server.started:
            raise RuntimeError("the mock OpenID Connect provider did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(10)

    # -- the endpoints --------------------------------------------------------------------------

    async def _discovery(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    async def _jwks(self, request: Request) -> Response:
        return JSONResponse({"keys": [self._key.as_dict(private=False)]})

    async def _authorize(self, request: Request) -> Response:
        query = request.query_params
        if query.get("client_id") != self.client_id or query.get("response_type") != "code":
            return JSONResponse({"error": "unauthorized_client"}, status_code=400)
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return JSONResponse({"error": "invalid_request", "error_description": "PKCE S256 needed"}, status_code=400)
        if "openid" not in query.get("scope", "").split():
            return JSONResponse({"error": "invalid_scope"}, status_code=400)
        code = secrets.token_urlsafe(16)
        redirect_uri = query["redirect_uri"]
        self._grants[code] = _Grant(redirect_uri, query.get("nonce"), query["code_challenge"])
        back = {"code": code, "state": query.get("state", "")}
        return RedirectResponse(f"{redirect_uri}?{urlencode(back)}", status_code=302)

    async def _token(self, request: Request) -> Response:
        self.token_requests += 1
        form = await request.form()
        expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        if request.headers.get("authorization") != f"Basic {expected}":
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        grant = self._grants.pop(str(form.get("code", "")), None)
        if (
            grant is None
            or form.get("grant_type") != "authorization_code"
            or form.get("redirect_uri") != grant.redirect_uri
        ):
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if challenge != grant.code_challenge:
            return JSONResponse({"error": "invalid_grant", "error_description": "PKCE verifier"}, status_code=400)
        return JSONResponse(
            {"access_token": secrets.token_urlsafe(16), "token_type": "Bearer", "id_token": self._id_token(grant)}
        )

    def _id_token(self, grant: _Grant) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.client_id,
            "iat": now,
            "exp": now + 300,
            "nonce": grant.nonce,
            **self.account,
            **self.overrides,
        }
        claims = {name: value for name, value in claims.items() if value is not None}
        key = RSAKey.generate_key(2048, parameters={"kid": KEY_ID}) if self.forge else self._key
        return jwt.encode({"alg": "RS256", "kid": KEY_ID}, claims, key)
