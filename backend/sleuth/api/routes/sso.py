"""Single sign-on with OpenID Connect (SLEUTH_OIDC_ISSUER, accounts mode).

`GET /api/auth/oidc/login` sends the browser to the provider; the provider sends it back to
`GET /api/auth/oidc/callback`, which checks the `state`, exchanges the code (PKCE), verifies the ID
token and signs the user in with the same cookies as a password sign-in, then sends the browser to
`/`. A sign-in that cannot go on signs no one in. Both routes are where a browser navigates, so a
browser (a request that accepts `text/html`) is sent back to the web UI's sign-in page with a reason
code (`/#/signin?sso_error=domain_not_allowed`), which the page turns into a sentence; another client
gets a 4xx (or 502, the provider's fault) with a JSON `detail` saying why. The code is one of a fixed
set of words: nothing the provider or the request sent reaches the page.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request, status
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
REFUSED_PAGE = "/#/signin?sso_error="  # the web UI's sign-in page, told why (frontend/src/components/SignIn.tsx)


NOT_CONFIGURED = "single sign-on is not configured on this server (SLEUTH_OIDC_ISSUER)"
BROWSER_REFUSED = (
    "a browser (Accept: text/html) whose sign-in is refused goes to the web UI's sign-in page, with `sso_error` "
    "saying why"
)


def _oidc_error_code(exc: OidcError) -> str:
    return "provider_unavailable" if exc.status >= 500 else "token_invalid"


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
        303: {"description": BROWSER_REFUSED},
        404: {"model": ErrorOut, "description": "Single sign-on is not configured"},
        502: {"model": ErrorOut, "description": "The provider cannot be reached or its discovery document is unusable"},
    },
)
async def oidc_login(request: Request) -> Response:
    """Start a sign-in with the provider: the browser goes there, and comes back to the callback."""
    client: OidcClient | None = request.app.state.oidc
    if client is None:
        return _refused(request, 404, NOT_CONFIGURED, "not_configured")
    try:
        started = await client.authorization(_redirect_uri(request))
    except OidcError as exc:
        return _refused(request, exc.status, exc.message, _oidc_error_code(exc))
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
        303: {"description": "Signed in (the sign-in and CSRF cookies are set): to the web UI; " + BROWSER_REFUSED},
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
    client: OidcClient | None = request.app.state.oidc
    if client is None:
        return _refused(request, 404, NOT_CONFIGURED, "not_configured")
    sealed = request.cookies.get(FLOW_COOKIE)
    flow = _seal(request).open(sealed) if sealed else None
    if flow is None:
        return _refused(
            request, 400, "this sign-in expired or was started in another browser; sign in again", "expired"
        )
    if error is not None:
        said = error if error.isascii() and len(error) <= 80 else "an error"
        return _refused(request, 400, f"the provider did not sign you in ({said})", "provider_refused")
    if not state or not same(state, flow.state):
        message = "the sign-in's state does not match the one this browser started; sign in again"
        return _refused(request, 400, message, "state_mismatch")
    if not code:
        return _refused(request, 400, "the provider sent no sign-in code", "no_code")
    try:
        identity = await client.identity(
            code, _redirect_uri(request), nonce=flow.nonce, code_verifier=flow.code_verifier
        )
        sso: SingleSignOn = request.app.state.single_sign_on
        signed = await asyncio.to_thread(sso.sign_in, identity)
    except OidcError as exc:
        return _refused(request, exc.status, exc.message, _oidc_error_code(exc))
    except SsoRefused as exc:
        return _refused(request, 403, exc.message, exc.code)
    response = RedirectResponse(AFTER_SIGN_IN, status_code=status.HTTP_303_SEE_OTHER)
    set_sign_in_cookies(response, signed, settings_of(request))
    _forget_flow(request, response)
    return response


def _refused(request: Request, status_code: int, message: str, code: str) -> Response:
    """A browser goes back to the sign-in page, told `code`; another client gets the status and `message`."""
    response: Response
    if _from_a_browser(request):
        response = RedirectResponse(REFUSED_PAGE + code, status_code=status.HTTP_303_SEE_OTHER)
    else:
        response = JSONResponse({"detail": message}, status_code=status_code)
    _forget_flow(request, response)  # one try per flow: a refused one cannot be replayed
    return response


def _from_a_browser(request: Request) -> bool:
    """A navigation: browsers ask for HTML first; scripts and API clients ask for JSON or anything."""
    return "text/html" in request.headers.get("accept", "").lower()


def _forget_flow(request: Request, response: Response) -> None:
    response.delete_cookie(
        FLOW_COOKIE, path=FLOW_COOKIE_PATH, httponly=True, samesite="lax", secure=settings_of(request).secure_cookies
    )
