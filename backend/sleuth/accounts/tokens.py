"""Secrets handed to clients (sign-in tokens, API keys) and the hashes the store keeps of them.

They are random (256 bits), so a fast hash is enough: nothing can be guessed from the hash, and a
database that leaks gives no token that works.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

API_KEY_PREFIX = "sk_sleuth_"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_token(sign_in_token: str) -> str:
    """The CSRF token of a sign-in: derived from it, so the server keeps nothing more, and a page
    that cannot read the sign-in cookie (HttpOnly) cannot make it either."""
    return hashlib.sha256(b"sleuth-csrf:" + sign_in_token.encode()).hexdigest()


def same(supplied: str, expected: str) -> bool:
    return hmac.compare_digest(supplied.encode(), expected.encode())
