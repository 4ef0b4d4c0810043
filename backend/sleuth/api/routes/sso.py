"""Single sign-on with OpenID Connect (SLEUTH_OIDC_ISSUER, accounts mode).

`GET /api/auth/oidc/login` sends the browser to the provider; the provider sends it back to
`GET /api/auth/oidc/callback`, which checks the `state`, exchanges the code (PKCE), verifies the ID
token and signs the user in with the same cookies as a password sign-in, then sends the browser to
`/`. A sign-in that cannot go on answers with a 4xx (or 502, the provider's fault) JSON `detail`
saying why, and signs no one in.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import JSONResponse, RedirectResponse, Response

from sleuth.accounts.oidc import CALLBACK_PATH, OidcClient, OidcError
from sleuth.accounts.sso import SingleSignOn, SsoRefused
from sleuth.accounts.sso_flow import FLOW_TTL_S, Flow, FlowSeal
from sleuth.accounts.tokens import same
from sleuth.api.auth import set_sign_in_cookies
from sleuth.api.routes.deps import responses, settings_of
from sleuth.api.schemas import ErrorOut

router = APIRouter(tags=["accounts"])

LOGIN_PATH = "/api/auth/oidc/login"
FLOW_COOKIE = "sleuth_oidc_flow"
FLOW_COOKIE_PATH = "/api/auth/oidc"  # sent only to these routes
AFTER_SIGN_IN = "/"


def oidc_of(request: Request) -> OidcClient:
    client: OidcClient | None = request.app.state.oidc
    if client is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, detail="single sign-on is not configured on this server (SLEUTH_OIDC_ISSUER)"
        )
    return client


def _seal(request: Request) -> FlowSeal:
    seal: FlowSeal = request.app.state.oidc_flow_seal
    return seal


def _redirect_uri(request: Request) -> str:
    """Where the provider sends the browser back: under SLEUTH_PUBLIC_URL, else the address this
    request came to (right without a proxy in front; the provider accepts only the registered one)."""
    public = settings_of(request).public_url
    base = public.rstrip("/") if public else str(request.base_url).rstrip("/")
    return base + CALLBACK_PATH


@router.get(
    "/auth/oidc/login",
    status_code=status.HTTP_302_FOUND,
    responses={
        302: {"description": "To the provider's sign-in page"},
        404: {"model": ErrorOut, "description": "Single sign-on is not configured"},
        502: {"model": ErrorOut, "description": "The provider cannot be reached or its discovery document is unusable"},
    },
)
async def oidc_login(request: Request) -> Response:
    """Start a sign-in with the provider: the browser goes there, and comes back to the callback."""
    client = oidc_of(request)
    try:
        started = await client.authorization(_redirect_uri(request))
    except OidcError as exc:
        return JSONResponse({"detail": exc.message}, status_code=exc.status)
    response = RedirectResponse(started.url, status_code=status.HTTP_302_FOUND)
    flow = Flow(started.state, started.nonce, started.code_verifier)
    response.set_cookie(
        FLOW_COOKIE,
        _seal(request).seal(flow),
        max_age=FLOW_TTL_S,
        path=FLOW_COOKIE_PATH,
        httponly=True,
        samesite="lax",  # the provider's redirect back is a top-level GET, which Lax cookies go with
        secure=settings_of(request).secure_cookies,
    )
    return response


@router.get(
    "/auth/oidc/callback",
    status_code=status.HTTP_303_SEE_OTHER,
    responses={
        303: {"description": "Signed in (the sign-in and CSRF cookies are set): to the web UI"},
        **responses(404),
        400: {"model": ErrorOut, "description": "The sign-in failed a check (state, nonce, ID token) or was cancelled"},
        403: {"model": ErrorOut, "description": "This account may not sign in here (the message says why)"},
        502: {"model": ErrorOut, "description": "The provider cannot be reached or answered wrongly"},
    },
)
async def oidc_callback(
    request: Request,
    code: str | None = None,
    state: str | None = None,
    error: str | None = None,
) -> Response:
    """Finish a sign-in with the provider and sign the user in."""
    client = oidc_of(request)
    sealed = request.cookies.get(FLOW_COOKIE)
    flow = _seal(request).open(sealed) if sealed else None
    if flow is None:
        return _refused(request, 400, "this sign-in expired or was started in another browser; sign in again")
    if error is not None:
        said = error if error.isascii() and len(error) <= 80 else "an error"
        return _refused(request, 400, f"the provider did not sign you in ({said})")
    if not state or not same(state, flow.state):
        return _refused(request, 400, "the sign-in's state does not match the one this browser started; sign in again")
    if not code:
        return _refused(request, 400, "the provider sent no sign-in code")
    try:
        identity = await client.identity(
            code, _redirect_uri(request), nonce=flow.nonce, code_verifier=flow.code_verifier
        )
        sso: SingleSignOn = request.app.state.single_sign_on
        signed = await asyncio.to_thread(sso.sign_in, identity)
    except OidcError as exc:
        return _refused(request, exc.status, exc.message)
    except SsoRefused as exc:
        return _refused(request, 403, exc.message)
    response = RedirectResponse(AFTER_SIGN_IN, status_code=status.HTTP_303_SEE_OTHER)
    set_sign_in_cookies(response, signed, settings_of(request))
    _forget_flow(request, response)
    return response


def _refused(request: Request, status_code: int, message: str) -> Response:
    response = JSONResponse({"detail": message}, status_code=status_code)
    _forget_flow(request, response)  # one try per flow: a refused one cannot be replayed
    return response


def _forget_flow(request: Request, response: Response) -> None:
    response.delete_cookie(
        FLOW_COOKIE, path=FLOW_COOKIE_PATH, httponly=True, samesite="lax", secure=settings_of(request).secure_cookies
    )
