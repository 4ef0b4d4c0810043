"""The document: one thing a tool returned (a search hit or an opened page)."""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field


def normalise_url(url: str) -> str:
    """A canonical form for de-duplication: lower-case scheme/host, no fragment, no trailing slash."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/") or ""
    netloc = parts.netloc.lower()
    if netloc.startswith("www."):
        netloc = netloc[4:]
    return urlunsplit((parts.scheme.lower(), netloc, path, parts.query, ""))


def document_id(url: str) -> str:
    """Stable id of a document, derived from its normalised URL."""
    return "d_" + hashlib.sha1(normalise_url(url).encode()).hexdigest()[:12]


class Document(BaseModel):
    """A source as it travels in packets, reports and the source registry."""

    id: str
    url: str
    title: str = ""
    snippet: str = ""
    source: str = Field(default="", description="The provider that returned it, e.g. `local`, `searxng`, `web`.")

    @classmethod
    def from_url(cls, url: str, title: str = "", snippet: str = "", source: str = "") -> Document:
        return cls(id=document_id(url), url=url, title=title, snippet=snippet, source=source)
