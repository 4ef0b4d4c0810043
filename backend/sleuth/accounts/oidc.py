"""The OpenID Connect client: the provider's discovery document, the authorization request (code
flow with PKCE S256, `state` and `nonce`), the code exchange and the ID token's verification
(signature by the provider's JWKS, `iss`, `aud`, `exp`, `iat`, `nonce`).

Authlib builds the request (PKCE, the grant URI) and checks the ID token's claims; joserfc checks its
signature. The HTTP calls go through one httpx client whose transport is injectable. The issuer is
the operator's choice, so it is called wherever it is, loopback included (no SSRF guard here).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

DISCOVERY_PATH = "/.well-known/openid-configuration"
# Sleuth's own path the provider sends the browser back to: the redirect URI an operator registers.
CALLBACK_PATH = "/api/auth/oidc/callback"
SCOPE = "openid email profile"
# Asymmetric signatures only: "none" proves nothing, and an HMAC would be keyed by the client secret.
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
CLOCK_SKEW_S = 60


class OidcError(Exception):
    """A sign-in with the provider that cannot go on. The message says why, for the person signing in
    (never a secret or a token); `status` is the HTTP status the API answers with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class ProviderMetadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    algorithms: tuple[str, ...]


@dataclass(frozen=True)
class Authorization:
    """Where to send the browser, and what the callback checks (kept by the caller until then)."""

    url: str
    state: str
    nonce: str
    code_verifier: str


@dataclass(frozen=True)
class Identity:
    """Who the provider says signed in, from a verified ID token."""

    issuer: str
    subject: str
    email: str | None
    email_verified: bool
    username: str | None  # preferred_username, when the provider sends one


class OidcClient:
    def __init__(
        self,
        issuer: str,
        client_id: str,
        client_secret: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        wall: Callable[[], float] = time.time,
        timeout_s: float = 10.0,
    ) -> None:
        self.issuer = issuer.rstrip("/")
        self._client_id = client_id
        self._client_secret = client_secret
        self._http = httpx.AsyncClient(transport=transport, timeout=timeout_s, follow_redirects=False)
        self._wall = wall
        self._metadata: ProviderMetadata | None = None
        self._keys: KeySet | None = None
        self._lock = asyncio.Lock()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def authorization(self, redirect_uri: str) -> Authorization:
        metadata = await self.metadata()
        state, nonce, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(32), secrets.token_urlsafe(48)
        url = prepare_grant_uri(
            metadata.authorization_endpoint,
            client_id=self._client_id,
            response_type="code",
            redirect_uri=redirect_uri,
            scope=SCOPE,
            state=state,
            nonce=nonce,
            code_challenge=create_s256_code_challenge(verifier),  # type: ignore[no-untyped-call]  # untyped in the stubs
            code_challenge_method="S256",
        )
        return Authorization(str(url), state, nonce, verifier)

    async def identity(self, code: str, redirect_uri: str, *, nonce: str, code_verifier: str) -> Identity:
        """Exchange the code for tokens and verify the ID token; OidcError when anything is off."""
        metadata = await self.metadata()
        tokens = await self._exchange(metadata, code, redirect_uri, code_verifier)
        id_token = tokens.get("id_token")
        if not isinstance(id_token, str):
            raise OidcError("the provider answered without an ID token", 502)
        claims = await self._verified_claims(metadata, id_token, nonce=nonce, access_token=tokens.get("access_token"))
        subject, email = claims.get("sub"), claims.get("email")
        username = claims.get("preferred_username")
        if not isinstance(subject, str) or not subject:
            raise OidcError("the provider's ID token names no subject")
        return Identity(
            issuer=metadata.issuer,
            subject=subject,
            email=email.strip() if isinstance(email, str) and email.strip() else None,
            # A few providers send the boolean as a string.
            email_verified=claims.get("email_verified") in (True, "true"),
            username=username if isinstance(username, str) and username.strip() else None,
        )

    async def check(self) -> ProviderMetadata:
        """Read the discovery document and the signing keys, as a first sign-in would (`sleuth doctor`)."""
        metadata = await self.metadata()
        await self._key_set(metadata)
        return metadata

    # -- discovery and keys ---------------------------------------------------------------------

    async def metadata(self) -> ProviderMetadata:
        """The discovery document, read once per process."""
        async with self._lock:
            if self._metadata is None:
                self._metadata = self._parse_metadata(await self._get_json(self.issuer + DISCOVERY_PATH))
            return self._metadata

    def _parse_metadata(self, document: dict[str, Any]) -> ProviderMetadata:
        issuer = document.get("issuer")
        # OpenID Connect Discovery: the document names the very issuer it was read from.
        if not isinstance(issuer, str) or issuer.rstrip("/") != self.issuer:
            raise OidcError(f"the provider's discovery document names another issuer ({issuer!r})", 502)
        endpoints = {}
        for field in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            value = document.get(field)
            if not isinstance(value, str) or not value.startswith(("https://", "http://")):
                raise OidcError(f"the provider's discovery document has no usable {field}", 502)
            endpoints[field] = value
        offered = document.get("id_token_signing_alg_values_supported") or ["RS256"]
        algorithms = tuple(a for a in offered if a in SIGNING_ALGORITHMS) if isinstance(offered, list) else ()
        if not algorithms:
            raise OidcError("the provider signs ID tokens with no algorithm this server accepts", 502)
        return ProviderMetadata(issuer=issuer, algorithms=algorithms, **endpoints)

    async def _key_set(self, metadata: ProviderMetadata, *, fresh: bool = False) -> KeySet:
        if self._keys is None or fresh:
            try:
                self._keys = KeySet.import_key_set(await self._get_json(metadata.jwks_uri))  # type: ignore[arg-type]
            except (JoseError, ValueError, TypeError, KeyError) as exc:
                raise OidcError(f"the provider's signing keys cannot be read ({type(exc).__name__})", 502) from None
        return self._keys

    # -- the code exchange and the ID token -----------------------------------------------------

    async def _exchange(
        self, metadata: ProviderMetadata, code: str, redirect_uri: str, code_verifier: str
    ) -> dict[str, Any]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": code_verifier,
        }
        try:
            response = await self._http.post(
                metadata.token_endpoint,
                data=form,
                auth=(self._client_id, self._client_secret),  # client_secret_basic
                headers={"Accept": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise OidcError(f"the provider's token endpoint cannot be reached ({type(exc).__name__})", 502) from None
        body = _json_object(response)
        if response.status_code != 200 or body is None:
            error = body.get("error") if body else None
            said = f": {error}" if isinstance(error, str) and error.isascii() and len(error) < 80 else ""
            raise OidcError(f"the provider refused to exchange the sign-in code{said}", 502)
        return body

    async def _verified_claims(
        self, metadata: ProviderMetadata, id_token: str, *, nonce: str, access_token: object
    ) -> CodeIDToken:
        keys = await self._key_set(metadata)
        try:
            try:
                token = jwt.decode(id_token, keys, algorithms=list(metadata.algorithms))
            except InvalidKeyIdError:  # the provider rotated its keys since they were read
                token = jwt.decode(
                    id_token, await self._key_set(metadata, fresh=True), algorithms=list(metadata.algorithms)
                )
            claims = CodeIDToken(
                token.claims,
                token.header,
                {
                    "iss": {"essential": True, "value": metadata.issuer},
                    "aud": {"essential": True, "value": self._client_id},
                },
                {"nonce": nonce, "client_id": self._client_id, "access_token": access_token},
            )
            claims.validate(now=int(self._wall()), leeway=CLOCK_SKEW_S)
        except JoseError as exc:
            raise OidcError(f"the provider's ID token failed verification: {_jose_reason(exc)}") from None
        return claims

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            response = await self._http.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise OidcError(f"the sign-in provider cannot be reached at {url} ({type(exc).__name__})", 502) from None
        body = _json_object(response)
        if response.status_code != 200 or body is None:
            raise OidcError(f"the sign-in provider answered {response.status_code} at {url}", 502)
        return body


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _jose_reason(exc: JoseError) -> str:
    """joserfc's description of what failed (`invalid claim: nonce`), never the token."""
    return exc.description or exc.error or type(exc).__name__
