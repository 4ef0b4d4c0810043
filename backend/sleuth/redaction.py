"""Keeping secrets out of logs, packets and error messages: by their value, or by their name."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

MASK = "[redacted]"
# `access_token`, `api_key`, `token`, `password`... but not `input_tokens`.
SECRET_NAME = re.compile(r"^(.*[_-])?(token|api_?key|key|secret|password|authorization|auth)$", re.IGNORECASE)
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
    return urlencode([(k, MASK if SECRET_NAME.search(k) else v) for k, v in pairs])
