"""Which URLs may stand in a final report as a citation or link."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

SHORTENERS = frozenset({
    "bit.ly", "t.co", "tinyurl.com", "goo.gl", "ow.ly", "is.gd", "buff.ly", "rebrand.ly", "cutt.ly",
    "shorturl.at", "tiny.cc", "rb.gy", "lnkd.in", "t.ly", "s.id", "v.gd", "bl.ink", "shorte.st", "adf.ly",
})
# Sleuth's own local corpus; its documents are verified against the registry like any other.
SAFE_SCHEMES = frozenset({"http", "https", "corpus"})


def unsafe_citation_reason(url: str) -> str | None:
    """Why `url` must not be cited (shortener, IP-literal host, other scheme), or None if it may."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return "malformed URL"
    if parts.scheme.lower() not in SAFE_SCHEMES:
        return f"unsafe URL scheme '{parts.scheme or 'none'}'"
    if parts.scheme.lower() == "corpus":
        return None
    if not host:
        return "URL without a host"
    if host in SHORTENERS or host.removeprefix("www.") in SHORTENERS:
        return f"URL shortener ({host}) hides the real source"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return None
    return f"IP-address host ({host}) is not a verifiable source"
