"""Optional bearer token for /api routes.

When `api_token` is set every /api route except `GET /api/health` needs
`Authorization: Bearer <token>`. Health stays open so load balancers and the Docker
HEALTHCHECK need no secret; it reveals only counts and the version. Browsers' EventSource
cannot send headers, so the token is also accepted as `?access_token=` (the access log
redacts it).
"""

from __future__ import annotations

import secrets

from fastapi import HTTPException, Request, status

from sleuth.api.routes.deps import settings_of


def check_token(request: Request) -> None:
    token = settings_of(request).api_token
    if token is None:
        return
    expected = token.get_secret_value()
    header = request.headers.get("authorization", "")
    scheme, _, supplied = header.partition(" ")
    if scheme.lower() != "bearer" or not supplied:
        supplied = request.query_params.get("access_token", "")
    if not supplied or not secrets.compare_digest(supplied.strip().encode(), expected.encode()):
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="missing or invalid bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )
