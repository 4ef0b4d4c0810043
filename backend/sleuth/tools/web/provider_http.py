"""Shared plumbing for search-provider HTTP APIs: one JSON request, every failure a clear ToolError.

Error messages never contain secrets: they are built from status codes and exception class
names, and every message is passed through `redact` with the provider's secrets as well.
The Toolbox prefixes each message with the provider's name.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic import SecretStr

from sleuth.core.redaction import redact_values
from sleuth.tools.base import ToolError

DEFAULT_TIMEOUT_S = 15.0
_TAGS = re.compile(r"<[^>]+>")


def secret_value(value: str | SecretStr | None) -> str | None:
    """The plain key, or None when unset or blank."""
    raw = value.get_secret_value() if isinstance(value, SecretStr) else value
    return raw.strip() if raw and raw.strip() else None


def clean_snippet(text: object) -> str:
    """Plain text from a provider snippet (Brave wraps matches in <strong>; entities are escaped)."""
    if not isinstance(text, str):
        return ""
    return " ".join(html.unescape(_TAGS.sub("", text)).split())


def http_url(value: object) -> str | None:
    """The value if it is an http(s) URL string, else None (providers sometimes return odd links)."""
    if isinstance(value, str) and value.strip().lower().startswith(("http://", "https://")):
        return value.strip()
    return None


@asynccontextmanager
async def _client(client: httpx.AsyncClient | None, timeout_s: float) -> AsyncIterator[httpx.AsyncClient]:
    if client is not None:
        yield client  # owned by the caller (tests, or a shared pool)
        return
    async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=True) as own:
        yield own


async def request_json(
    method: str,
    url: str,
    *,
    client: httpx.AsyncClient | None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    secrets: Iterable[str | None] = (),
    forbidden_hint: str = "the API key was rejected",
    **kwargs: Any,
) -> Any:
    """Send one request and return the decoded JSON body, mapping every failure to ToolError."""
    secrets = list(secrets)
    endpoint = httpx.URL(url).copy_with(query=None, userinfo=b"")  # no query or credentials in messages
    try:
        async with _client(client, timeout_s) as http:
            response = await http.request(method, url, **kwargs)
    except httpx.TimeoutException:
        raise ToolError(redact_values(f"timed out after {timeout_s:g} s calling {endpoint}", secrets)) from None
    except httpx.HTTPError as exc:
        raise ToolError(redact_values(f"unreachable: {endpoint} ({type(exc).__name__})", secrets)) from None
    status = response.status_code
    if status == 429:
        retry = response.headers.get("retry-after", "").strip()
        after = f"; retry after {retry} s" if retry.isdigit() else ""
        raise ToolError(f"rate limited (HTTP 429){after}")
    if status in (401, 403):
        raise ToolError(f"{forbidden_hint} (HTTP {status})")
    if status >= 500:
        raise ToolError(f"server error (HTTP {status}) from {redact_values(str(endpoint), secrets)}")
    if status >= 400:
        raise ToolError(f"request rejected (HTTP {status}) by {redact_values(str(endpoint), secrets)}")
    try:
        return response.json()
    except ValueError:
        raise ToolError(f"malformed JSON in the response from {redact_values(str(endpoint), secrets)}") from None


def results_list(payload: Any, *path: str) -> list[dict[str, Any]]:
    """The list at `payload[path...]`, keeping only dict items; ToolError if the shape is wrong."""
    node: Any = payload
    for key in path:
        if not isinstance(node, dict):
            raise ToolError(f"unexpected response shape: no {'.'.join(path)!r}")
        node = node.get(key, [] if key == path[-1] else {})
    if not isinstance(node, list):
        raise ToolError(f"unexpected response shape: {'.'.join(path)!r} is not a list")
    return [item for item in node if isinstance(item, dict)]
