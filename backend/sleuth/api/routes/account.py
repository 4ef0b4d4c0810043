"""Signing in and out, the caller, their password and their API keys (SLEUTH_AUTH=accounts)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, Response, status

from sleuth.accounts.limits import LoginLimiter
from sleuth.accounts.passwords import WeakPassword
from sleuth.accounts.tokens import csrf_token
from sleuth.api.auth import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    Principal,
    accounts_of,
    authenticate,
    set_sign_in_cookies,
    unauthorized,
)
from sleuth.api.routes.deps import not_found, responses, settings_of
from sleuth.api.schemas import (
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyOut,
    ErrorOut,
    LoginIn,
    MeOut,
    PasswordChangeIn,
)
from sleuth.store.accounts import ApiKeyRecord

# Open: signing in is how a caller gets credentials.
open_router = APIRouter(tags=["accounts"])
# Behind `authenticate`, as the app includes it.
router = APIRouter(tags=["accounts"])

WRONG = "wrong user name or password"
WRONG_CURRENT = "the current password is wrong"  # the web UI tells it from an ended sign-in by these words
Caller = Annotated[Principal, Depends(authenticate)]


def limiter_of(request: Request) -> LoginLimiter:
    limiter: LoginLimiter = request.app.state.login_limiter
    return limiter


def accounts_only(request: Request, what: str) -> None:
    if settings_of(request).auth_mode != "accounts":
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"{what} needs SLEUTH_AUTH=accounts on the server")


def _me(request: Request, principal: Principal, csrf: str | None = None) -> MeOut:
    return MeOut(
        name=principal.name,
        is_admin=principal.is_admin,
        auth=settings_of(request).auth_mode,
        has_password=principal.user is not None and principal.user.password_hash is not None,
        csrf_token=csrf,
    )


@open_router.post(
    "/auth/login",
    response_model=MeOut,
    responses={
        401: {"model": ErrorOut, "description": "Wrong user name or password (which of them is not said)"},
        404: {"model": ErrorOut, "description": "The server does not have accounts (SLEUTH_AUTH)"},
        429: {"model": ErrorOut, "description": "Too many failed sign-ins for this name or address (see Retry-After)"},
    },
)
async def login(request: Request, response: Response, body: LoginIn) -> MeOut:
    """Sign in: sets the HttpOnly sign-in cookie and the readable `sleuth_csrf` cookie."""
    accounts_only(request, "signing in")
    settings = settings_of(request)
    limiter = limiter_of(request)
    keys = (f"name:{body.username.lower()}", f"address:{request.client.host if request.client else ''}")
    wait = limiter.retry_after(*keys)
    if wait is not None:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            detail="too many failed sign-ins; try again later",
            headers={"Retry-After": str(max(1, round(wait)))},
        )
    signed = await asyncio.to_thread(accounts_of(request).sign_in, body.username, body.password)
    if signed is None:
        limiter.failed(*keys)
        raise unauthorized(WRONG)
    limiter.succeeded(keys[0])
    set_sign_in_cookies(response, signed, settings)
    return _me(request, Principal(signed.user), signed.csrf)


@router.post("/auth/logout", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401))
async def logout(request: Request, principal: Caller) -> Response:
    """End the caller's browser sign-ins, on every device (an API key's request ends nothing:
    delete the key instead)."""
    if principal.sign_in_token is not None:
        await asyncio.to_thread(accounts_of(request).sign_out, principal.sign_in_token)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    secure = settings_of(request).secure_cookies
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        response.delete_cookie(name, path="/", secure=secure, httponly=name == SESSION_COOKIE, samesite="lax")
    return response


@router.get("/auth/me", response_model=MeOut, responses=responses(401))
async def me(request: Request, principal: Caller) -> MeOut:
    """The caller: who the UI shows as signed in (the built-in `local` user without accounts)."""
    return _me(request, principal, csrf_token(principal.sign_in_token) if principal.sign_in_token else None)


@router.post(
    "/auth/password",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={**responses(401, 404), 422: {"model": ErrorOut, "description": "The new password is too weak"}},
)
async def change_password(request: Request, body: PasswordChangeIn, principal: Caller) -> Response:
    """Change the caller's password; their other browser sign-ins end at once."""
    accounts_only(request, "a password")
    assert principal.user is not None  # accounts mode: every caller is a user
    accounts = accounts_of(request)
    user_id = principal.user.id
    if not await asyncio.to_thread(accounts.verify_password, user_id, body.current_password):
        raise unauthorized(WRONG_CURRENT)
    try:
        await asyncio.to_thread(accounts.set_password, user_id, body.new_password, keep_sign_in=principal.sign_in_hash)
    except WeakPassword as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, detail=str(exc)) from None
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def iso_time(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _key_out(record: ApiKeyRecord) -> ApiKeyOut:
    return ApiKeyOut(
        id=record.id,
        name=record.name,
        created_at=iso_time(record.created_at) or "",
        expires_at=iso_time(record.expires_at),
        last_used_at=iso_time(record.last_used_at),
    )


def _user_id(request: Request, principal: Principal) -> str:
    accounts_only(request, "an API key")
    assert principal.user is not None  # accounts mode: every caller is a user
    return principal.user.id


@router.post("/keys", status_code=status.HTTP_201_CREATED, response_model=ApiKeyCreated, responses=responses(401, 404))
async def create_key(request: Request, body: ApiKeyCreate, principal: Caller) -> ApiKeyCreated:
    """A new API key of the caller's; the key itself is in this answer only (the server keeps its hash)."""
    user_id = _user_id(request, principal)
    made = await asyncio.to_thread(
        accounts_of(request).new_key, user_id, body.name, expires_in_days=body.expires_in_days
    )
    return ApiKeyCreated(**_key_out(made.record).model_dump(), key=made.key)


@router.get("/keys", response_model=list[ApiKeyOut], responses=responses(401, 404))
async def list_keys(request: Request, principal: Caller) -> list[ApiKeyOut]:
    """The caller's API keys (never the keys themselves)."""
    user_id = _user_id(request, principal)
    return [_key_out(k) for k in await asyncio.to_thread(accounts_of(request).keys, user_id)]


@router.delete("/keys/{key_id}", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401, 404))
async def delete_key(request: Request, key_id: str, principal: Caller) -> Response:
    """Delete one of the caller's API keys: it stops working at once."""
    user_id = _user_id(request, principal)
    if not await asyncio.to_thread(accounts_of(request).delete_key, user_id, key_id):
        raise not_found("API key", key_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
