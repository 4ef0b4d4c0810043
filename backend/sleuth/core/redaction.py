"""Keeping secrets out of logs, packets and error messages: by their value, or by their name."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "[redacted]"
# `access_token`, `api_key`, `token`, `password`... but not `input_tokens`.
SECRET_NAME = re.compile(r"^(.*[_-])?(token|api_?key|key|secret|password|authorization|auth)$", re.IGNORECASE)
# In a URL's query, OAuth's one-use credentials too: a single sign-on's authorization `code` and `state`.
SECRET_QUERY_NAMES = frozenset({"code", "state"})
# Shorter values would mask ordinary words; no real key is this short.
MIN_SECRET_CHARS = 4


def redact_values(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every known secret value masked (providers sometimes echo the key they were given)."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_CHARS:
            text = text.replace(secret, MASK)
    return text


def redact_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `fields` with the values of secret-looking names masked."""
    return {key: MASK if SECRET_NAME.search(key) else value for key, value in fields.items()}


def redact_query(query: str) -> str:
    """A URL query string with the values of secret-looking parameters masked."""
    pairs = parse_qsl(query, keep_blank_values=True)
    return urlencode([(k, MASK if SECRET_NAME.search(k) or k.lower() in SECRET_QUERY_NAMES else v) for k, v in pairs])


def redact_url(url: str) -> str:
    """A URL with the password of its user info and secret-looking query values masked.

    Database URLs carry their password inline (postgresql://user:secret@host/db); this is the
    form that may appear in errors, logs and `sleuth doctor`.
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # e.g. a port that is not a number: mask everything after the scheme's user
        return re.sub(r"(//[^/:@]*):[^@/]*@", rf"\1:{MASK}@", url)
    netloc = parts.netloc
    if password is not None:
        userinfo, _, hostinfo = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{MASK}@{hostinfo}"
    query = redact_query(parts.query) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_password(url: str) -> str | None:
    """The password in a URL's user info, to mask it wherever a driver echoes it back."""
    try:
        return urlsplit(url).password
    except ValueError:
        return None
