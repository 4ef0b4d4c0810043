"""SSRF guard: decide whether a URL may be fetched, and which vetted IP address to connect to.

Every hop (the first URL and each redirect target) goes through `SsrfGuard.vet`, which resolves
the host once, checks *all* of its addresses, and returns one of them for the fetcher to pin
the connection to — so a DNS answer that changes between check and connect (DNS rebinding)
cannot steer the request to an internal address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

import httpx

from sleuth.tools.base import SourceBlocked, ToolError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# host, port -> the host's addresses as strings. Injectable so tests never touch real DNS.
Resolver = Callable[[str, int], Awaitable[list[str]]]

ALLOWED_SCHEMES = ("http", "https")

# Ranges that `ipaddress` does not flag as private on every Python version but that are
# never a public web server.
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve with the event loop's getaddrinfo (non-blocking), keeping every address once."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id ("fe80::1%eth0")
        if address not in addresses:
            addresses.append(address)
    return addresses


def address_problem(ip: IPAddress) -> str | None:
    """Why `ip` must not be contacted ("a loopback address"), or None for a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return f"an IPv4-mapped IPv6 address (of {ip.ipv4_mapped})"
        embedded = ip.sixtofour or (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in _NAT64 else None)
        if embedded is not None and address_problem(embedded):
            return f"a 6to4/NAT64 address embedding {embedded}"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_unspecified:
        return "an unspecified address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "a carrier-grade NAT (100.64.0.0/10) address"
    if ip.is_private:
        return "a private address"
    if ip.is_reserved:
        return "a reserved address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "a site-local address"
    if not ip.is_global:
        return "not a public address"
    return None


@dataclass(frozen=True)
class AllowList:
    """Operator-trusted intranet targets: host names (``wiki.corp``, ``*.corp`` / ``.corp``) and CIDRs."""

    hosts: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, entries: str | Iterable[str] | None) -> AllowList:
        """Accept a comma-separated string or a list; each entry a host name, an IP or a CIDR."""
        if entries is None:
            return cls()
        items = entries.split(",") if isinstance(entries, str) else list(entries)
        hosts: set[str] = set()
        suffixes: list[str] = []
        networks: list[IPNetwork] = []
        for raw in items:
            entry = raw.strip().lower().strip("[]")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            if entry.startswith("*."):
                suffixes.append(entry[1:])
            elif entry.startswith("."):
                suffixes.append(entry)
            else:
                hosts.add(entry.rstrip("."))
        return cls(frozenset(hosts), tuple(suffixes), tuple(networks))

    def allows_host(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        if host in self.hosts or any(host.endswith(suffix) for suffix in self.suffixes):
            return True
        try:
            return self.allows_ip(ipaddress.ip_address(host))
        except ValueError:
            return False

    def allows_ip(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self.networks)


@dataclass(frozen=True)
class VettedTarget:
    """One hop that passed the guard: the URL as requested and the address to connect to."""

    url: httpx.URL
    address: str

    @property
    def pinned_url(self) -> httpx.URL:
        """The same URL with the host replaced by the vetted address (connect there, nowhere else)."""
        return self.url.copy_with(host=self.address)

    @property
    def host_header(self) -> str:
        return self.url.netloc.decode("ascii")

    @property
    def tls_extensions(self) -> dict[str, str]:
        """What keeps the real name in TLS (SNI and the certificate check) while connecting to the address."""
        return {"sni_hostname": self.url.host} if self.url.scheme == "https" else {}

    @property
    def origin(self) -> tuple[str, str, int]:
        return origin_of(self.url)


def origin_of(url: httpx.URL) -> tuple[str, str, int]:
    """(scheme, host, port), the port filled in: what one vetted address serves."""
    return url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80)


@dataclass
class SsrfGuard:
    allow: AllowList = field(default_factory=AllowList)
    resolver: Resolver = system_resolver

    def check_static(self, url: str | httpx.URL) -> httpx.URL:
        """Checks that need no DNS: scheme, a host, and IP-literal hosts. Returns the parsed URL."""
        try:
            parsed = httpx.URL(str(url))
        except (httpx.InvalidURL, ValueError) as exc:
            raise ToolError(f"refused: {str(url)[:200]!r} is not a valid URL ({exc})") from None
        if parsed.scheme not in ALLOWED_SCHEMES:
            raise ToolError(f"refused: scheme {parsed.scheme or '(none)'!r} is not allowed (only http and https)")
        if not parsed.host:
            raise ToolError(f"refused: {str(url)[:200]!r} has no host")
        if parsed.userinfo:
            # Credentials in URLs are a classic way to disguise the real host ("https://bank.com@evil").
            raise ToolError("refused: URLs with embedded credentials are not fetched")
        literal = _ip_or_none(parsed.host)
        if literal is not None and not self.allow.allows_ip(literal):
            problem = address_problem(literal)
            if problem:
                raise SourceBlocked("ssrf", f"refused: {literal} is {problem}")
        return parsed

    async def vet(self, url: str | httpx.URL) -> VettedTarget:
        """Resolve the host once, check every address, and return the one to pin the connection to."""
        parsed = self.check_static(url)
        host = parsed.host
        literal = _ip_or_none(host)
        if literal is not None:
            return VettedTarget(parsed, str(literal))
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        try:
            raw_addresses = await self.resolver(host, port)
        except (OSError, UnicodeError) as exc:
            raise ToolError(f"could not resolve {host}: {exc}") from None
        addresses = [ip for ip in (_ip_or_none(a) for a in raw_addresses) if ip is not None]
        if not addresses:
            raise ToolError(f"could not resolve {host}: no addresses")
        if not self.allow.allows_host(host):
            for ip in addresses:  # every address: an attacker controls which one a client picks
                problem = None if self.allow.allows_ip(ip) else address_problem(ip)
                if problem:
                    raise SourceBlocked("ssrf", f"refused: {host} resolves to {ip}, which is {problem}")
        return VettedTarget(parsed, str(addresses[0]))


def _ip_or_none(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None
