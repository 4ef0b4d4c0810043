"""Who a request comes from (SLEUTH_AUTH), decided once per request by `authenticate`.

* `none`: everyone is the built-in user; no credential is asked for.
* `token`: every /api route but `GET /api/health` needs `Authorization: Bearer <SLEUTH_API_TOKEN>`.
  Browsers' EventSource cannot send headers, so the token is also accepted as `?access_token=`
  (the access log redacts it). The caller is the built-in user.
* `accounts`: an API key as `Authorization: Bearer sk_sleuth_…`, or the sign-in cookie. A request
  signed in by cookie that changes something also needs the sign-in's CSRF token in
  `X-CSRF-Token` (the page reads it from the `sleuth_csrf` cookie); a bearer request does not,
  since a browser never adds a bearer header by itself.

Health stays open in every mode, so load balancers and the Docker HEALTHCHECK need no secret; it
reveals only counts and the version. Refusals say what is missing, never whether a user exists.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from fastapi import HTTPException, Request, Response, status

from sleuth.accounts.service import Accounts, SignedIn
from sleuth.accounts.tokens import API_KEY_PREFIX, csrf_token, same
from sleuth.config import Settings
from sleuth.store.accounts import UserRecord

SESSION_COOKIE = "sleuth_session"
CSRF_COOKIE = "sleuth_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
BUILT_IN_NAME = "local"


@dataclass(frozen=True)
class Principal:
    """The caller: a user of `accounts`, or (user None) the built-in user of `none` and `token`."""

    user: UserRecord | None
    sign_in_token: str | None = None  # the cookie's, when the request was signed in by it
    sign_in_hash: str | None = None

    @property
    def user_id(self) -> str | None:
        return self.user.id if self.user else None

    @property
    def name(self) -> str:
        return self.user.name if self.user else BUILT_IN_NAME

    @property
    def is_admin(self) -> bool:
        return self.user.is_admin if self.user else True  # the only user of a single-user server


BUILT_IN = Principal(None)


def unauthorized(detail: str) -> HTTPException:
    return HTTPException(status.HTTP_401_UNAUTHORIZED, detail=detail, headers={"WWW-Authenticate": "Bearer"})


def set_sign_in_cookies(response: Response, signed: SignedIn, settings: Settings) -> None:
    """The cookies of a new browser sign-in (by password or single sign-on): the HttpOnly sign-in
    token and the readable CSRF token, as long as the sign-in, which the server ends."""
    max_age = int(settings.auth_session_hours * 3600)
    for name, value, http_only in ((SESSION_COOKIE, signed.token, True), (CSRF_COOKIE, signed.csrf, False)):
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            path="/",
            httponly=http_only,
            samesite="lax",
            secure=settings.secure_cookies,
        )


def accounts_of(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


def principal_of(request: Request) -> Principal:
    """The caller `authenticate` found for this request (every route that serves a user's data
    depends on it; a route that does not has no caller, and this says so loudly)."""
    principal: Principal | None = getattr(request.state, "principal", None)
    if principal is None:
        raise RuntimeError(f"{request.url.path} serves data without authenticating its caller")
    return principal


def authenticate(request: Request) -> Principal:
    """The route dependency: find the caller (once per request) or refuse with 401 / 403.

    Synchronous, so FastAPI runs it on its thread pool: with accounts it reads the database."""
    known: Principal | None = getattr(request.state, "principal", None)
    if known is not None:
        return known
    settings: Settings = request.app.state.settings
    mode = settings.auth_mode
    if mode == "none":
        principal = BUILT_IN
    elif mode == "token":
        _check_shared_token(request, settings)
        principal = BUILT_IN
    else:
        principal = _account_caller(request)
    request.state.principal = principal
    return principal


def _bearer(request: Request) -> str | None:
    scheme, _, supplied = request.headers.get("authorization", "").partition(" ")
    return supplied.strip() if scheme.lower() == "bearer" and supplied.strip() else None


def _check_shared_token(request: Request, settings: Settings) -> None:
    assert settings.api_token is not None  # the settings refuse token mode without one
    expected = settings.api_token.get_secret_value()
    supplied = _bearer(request) or request.query_params.get("access_token", "")
    if not supplied or not secrets.compare_digest(supplied.encode(), expected.encode()):
        raise unauthorized("missing or invalid bearer token")


def _account_caller(request: Request) -> Principal:
    accounts = accounts_of(request)
    key = _bearer(request)
    if key is not None:
        caller = accounts.by_api_key(key) if key.startswith(API_KEY_PREFIX) else None
        if caller is None:
            raise unauthorized("invalid, expired or revoked API key")
        return Principal(caller.user)
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        raise unauthorized("sign in (POST /api/auth/login) or send an API key as a bearer token")
    caller = accounts.by_sign_in(token)
    if caller is None:
        raise unauthorized("your sign-in has ended; sign in again")
    if request.method not in SAFE_METHODS and not same(request.headers.get(CSRF_HEADER, ""), csrf_token(token)):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            detail=f"missing or wrong {CSRF_HEADER} header (echo the {CSRF_COOKIE} cookie's value)",
        )
    return Principal(caller.user, token, caller.sign_in_hash)
