"""A documented, deterministic credibility heuristic for sources, and the unsafe-citation check.

The score is a coarse prior about a *host*, not a judgement of a page:

====================================================  =====  ==========================================
what                                                  score  why
====================================================  =====  ==========================================
``corpus://`` (Sleuth's own local corpus)             1.0    the user put it there
known reference hosts (see ``REFERENCE_DOMAINS``)     0.9    curated, edited or peer reviewed
public-sector / academic suffixes (.gov, .edu, .mil,  0.85   institutional publishers
  .int, gov.xx, ac.xx, edu.xx)
any other http(s) host                                0.5    unknown: neither trusted nor suspect
URL shorteners (``SHORTENERS``)                       0.1    hide the real destination
IP-literal hosts                                      0.1    no publisher identity; often internal
non-http(s) schemes, URLs without a host              0.0    not a web source at all
====================================================  =====  ==========================================

Sources scoring at or below ``credibility_threshold`` (default 0.2) are not fetched.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

HIGH = 0.9
INSTITUTIONAL = 0.85
MEDIUM = 0.5
LOW = 0.1
NONE = 0.0

# Hosts (and their subdomains) known for edited, reviewed or primary reference material.
REFERENCE_DOMAINS: frozenset[str] = frozenset(
    {
        "wikipedia.org",
        "wikimedia.org",
        "britannica.com",
        "python.org",
        "docs.python.org",
        "peps.python.org",
        "developer.mozilla.org",
        "w3.org",
        "whatwg.org",
        "ietf.org",
        "rfc-editor.org",
        "unicode.org",
        "iso.org",
        "kernel.org",
        "arxiv.org",
        "doi.org",
        "nature.com",
        "science.org",
        "sciencedirect.com",
        "springer.com",
        "link.springer.com",
        "wiley.com",
        "cell.com",
        "thelancet.com",
        "nejm.org",
        "bmj.com",
        "plos.org",
        "pnas.org",
        "acm.org",
        "ieee.org",
        "jstor.org",
        "ncbi.nlm.nih.gov",
        "who.int",
        "oecd.org",
        "worldbank.org",
        "imf.org",
        "europa.eu",
        "un.org",
    }
)

# Redirecting short-link services: the destination is invisible until followed.
SHORTENERS: frozenset[str] = frozenset(
    {
        "bit.ly",
        "bitly.com",
        "t.co",
        "tinyurl.com",
        "goo.gl",
        "ow.ly",
        "is.gd",
        "buff.ly",
        "tiny.cc",
        "rebrand.ly",
        "cutt.ly",
        "shorturl.at",
        "rb.gy",
        "t.ly",
        "s.id",
        "v.gd",
        "lnkd.in",
        "db.tt",
        "qr.ae",
        "adf.ly",
        "bl.ink",
        "trib.al",
        "dlvr.it",
        "ift.tt",
        "youtu.be",
        "amzn.to",
        "fb.me",
        "wp.me",
        "shorte.st",
        "clck.ru",
        "cli.re",
        "short.io",
    }
)

INSTITUTIONAL_SUFFIXES: tuple[str, ...] = (".gov", ".edu", ".mil", ".int")
# Second-level public-sector/academic labels used under country codes: gov.uk, ac.jp, edu.au ...
INSTITUTIONAL_SECOND_LEVEL: frozenset[str] = frozenset({"gov", "ac", "edu", "gouv", "govt", "mil"})


@dataclass(frozen=True)
class Credibility:
    score: float
    reason: str


def _host(url: str) -> tuple[str, str]:
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").rstrip(".").lower()
    return parts.scheme.lower(), host


# Numeric host spellings that resolvers accept as IPv4: 2130706433, 0x7f.1, 127.1, 0177.0.0.1.
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]+|\d+)(\.(0x[0-9a-f]+|\d+)){0,3}$")


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return bool(_NUMERIC_HOST.match(host))
    return True


def _matches(host: str, domains: frozenset[str]) -> bool:
    """True when `host` is one of `domains` or a subdomain of one."""
    labels = host.split(".")
    return any(".".join(labels[i:]) in domains for i in range(len(labels)))


def _is_institutional(host: str) -> bool:
    if host.endswith(INSTITUTIONAL_SUFFIXES):
        return True
    labels = host.split(".")
    # "gov.uk", "ac.jp": a public-sector label right above a two-letter country code.
    return len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in INSTITUTIONAL_SECOND_LEVEL


def _unsafe(scheme: str, host: str) -> Credibility | None:
    """The one judgement of an unsafe URL, shared by the credibility score and the citation check."""
    if scheme not in ("http", "https"):
        return Credibility(NONE, f"scheme {scheme or '(none)'!r} is not http or https")
    if not host:
        return Credibility(NONE, "URL has no host")
    if _is_ip_literal(host):
        return Credibility(LOW, f"host {host} is a raw IP address")
    if _matches(host, SHORTENERS):
        return Credibility(LOW, f"{host} is a URL shortener")
    return None


def credibility(url: str) -> Credibility:
    """Score a source URL in [0, 1] with the heuristic in the module docstring."""
    scheme, host = _host(url)
    if scheme == "corpus":
        return Credibility(1.0, "Sleuth's local corpus")
    unsafe = _unsafe(scheme, host)
    if unsafe is not None:
        return unsafe
    if _matches(host, REFERENCE_DOMAINS):
        return Credibility(HIGH, f"{host} is a known reference source")
    if _is_institutional(host):
        return Credibility(INSTITUTIONAL, f"{host} is a public-sector or academic host")
    return Credibility(MEDIUM, f"{host} is not a known source")


def is_unsafe_citation_url(url: str) -> str | None:
    """Why `url` must not appear as a citation (shortener, IP host, non-http scheme), or None if safe.

    `corpus://` is Sleuth's own local corpus and `mcp://` a result of a configured MCP server's tool
    (tools/mcp/results.py): both are always safe.
    """
    scheme, host = _host(url)
    if scheme in ("corpus", "mcp"):
        return None
    unsafe = _unsafe(scheme, host)
    return unsafe.reason if unsafe is not None else None
