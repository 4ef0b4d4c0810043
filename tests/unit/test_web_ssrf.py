"""SSRF guard: schemes, private/loopback/link-local targets, redirects to them, allow-list, pinning.

No test here opens a socket: DNS is a fake resolver and the network an httpx.MockTransport.
"""

from __future__ import annotations

import ipaddress
from dataclasses import replace

import httpx
import pytest

from sleuth.config import Settings
from sleuth.tools.base import ToolError
from sleuth.tools.web.factory import fetch_limits
from sleuth.tools.web.fetch import SafeFetcher
from sleuth.tools.web.reader import WebReader
from sleuth.tools.web.ssrf import AllowList, SsrfGuard, address_problem

PUBLIC = "93.184.216.34"
DNS = {
    "example.test": [PUBLIC],
    "intranet.test": ["10.0.0.5"],
    "mixed.test": [PUBLIC, "192.168.1.10"],  # one bad address among good ones is enough to refuse
    "metadata.test": ["169.254.169.254"],
    "v6local.test": ["fe80::1"],
}


async def fake_resolver(host: str, port: int) -> list[str]:
    if host not in DNS:
        raise OSError(f"Name or service not known: {host}")
    return DNS[host]


def make_reader(
    handler=None, *, allow: str = "", max_redirects: int = 5, threshold: float = 0.2
) -> tuple[WebReader, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if handler is None:
            return httpx.Response(
                200, text="<html><title>ok</title><p>fine</p></html>", headers={"content-type": "text/html"}
            )
        return handler(request)

    guard = SsrfGuard(AllowList.parse(allow), fake_resolver)
    fetcher = SafeFetcher(
        guard, replace(fetch_limits(Settings()), max_redirects=max_redirects), transport=httpx.MockTransport(record)
    )
    return WebReader(fetcher, credibility_threshold=threshold), seen


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1/", "refused: 127.0.0.1 is a loopback address"),
        ("http://127.0.0.1:8080/admin", "refused: 127.0.0.1 is a loopback address"),
        ("http://[::1]/", "refused: ::1 is a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "refused: 169.254.169.254 is a link-local address"),
        ("http://[fe80::1]/", "refused: fe80::1 is a link-local address"),
        ("http://10.1.2.3/", "refused: 10.1.2.3 is a private address"),
        ("http://100.64.0.1/", r"refused: 100.64.0.1 is a carrier-grade NAT"),
        ("http://0.0.0.0/", "refused: 0.0.0.0 is an unspecified address"),
        ("http://224.0.0.1/", "refused: 224.0.0.1 is a multicast address"),
        ("http://[::ffff:127.0.0.1]/", "refused: ::ffff:7f00:1 is an IPv4-mapped IPv6 address"),
        ("file:///etc/passwd", "refused: scheme 'file' is not allowed"),
        ("gopher://example.test:70/_stats", "refused: scheme 'gopher' is not allowed"),
        ("ftp://example.test/x", "refused: scheme 'ftp' is not allowed"),
        ("http://user:pw@example.test/", "refused: URLs with embedded credentials"),
        ("http://intranet.test/", "refused: intranet.test resolves to 10.0.0.5, which is a private address"),
        ("http://mixed.test/", "refused: mixed.test resolves to 192.168.1.10, which is a private address"),
        ("http://metadata.test/", "resolves to 169.254.169.254, which is a link-local address"),
        ("http://v6local.test/", "resolves to fe80::1, which is a link-local address"),
        ("http://nowhere.test/", "could not resolve nowhere.test"),
    ],
)
async def test_refused_targets(url: str, message: str) -> None:
    reader, seen = make_reader()
    with pytest.raises(ToolError, match=message):
        await reader.read(url)
    assert seen == []  # refused before any request was sent


async def test_public_name_redirecting_to_private_address_is_refused() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "http://127.0.0.1:9000/secret"})

    reader, seen = make_reader(handler)
    with pytest.raises(ToolError, match="refused: 127.0.0.1 is a loopback address"):
        await reader.read("http://example.test/start")
    assert len(seen) == 1  # the public first hop only; the private hop was never requested


async def test_redirect_to_name_resolving_privately_is_refused() -> None:
    reader, seen = make_reader(lambda r: httpx.Response(301, headers={"location": "//intranet.test/wiki"}))
    with pytest.raises(ToolError, match="intranet.test resolves to 10.0.0.5"):
        await reader.read("https://example.test/")
    assert len(seen) == 1


async def test_redirect_to_file_scheme_is_refused() -> None:
    reader, _ = make_reader(lambda r: httpx.Response(302, headers={"location": "file:///etc/passwd"}))
    with pytest.raises(ToolError, match="scheme 'file' is not allowed"):
        await reader.read("http://example.test/")


async def test_connection_is_pinned_to_the_vetted_address() -> None:
    reader, seen = make_reader()
    page = await reader.read("https://example.test/path?q=1")
    request = seen[0]
    # The socket goes to the address that was checked, never to a second DNS answer...
    assert request.url.host == PUBLIC and request.url.path == "/path" and request.url.params["q"] == "1"
    # ...while the server still sees its own name, and TLS verifies the certificate for it.
    assert request.headers["host"] == "example.test"
    assert request.extensions["sni_hostname"] == "example.test"
    assert page.document.url == "https://example.test/path?q=1"
    assert page.text == "fine"


async def test_redirect_limit() -> None:
    def loop(request: httpx.Request) -> httpx.Response:
        hop = int(request.url.params.get("n", "0"))
        return httpx.Response(302, headers={"location": f"/r?n={hop + 1}"})

    reader, seen = make_reader(loop, max_redirects=3)
    with pytest.raises(ToolError, match="refused: more than 3 redirects"):
        await reader.read("http://example.test/r")
    assert len(seen) == 4


async def test_allow_list_admits_intranet_hosts_and_cidrs() -> None:
    reader, seen = make_reader(allow="intranet.test")
    assert (await reader.read("http://intranet.test/wiki")).text == "fine"
    assert seen[-1].url.host == "10.0.0.5"

    reader, _ = make_reader(allow="10.0.0.0/8")
    assert (await reader.read("http://intranet.test/wiki")).text == "fine"
    assert (await reader.read("http://10.1.2.3/")).text == "fine"  # allow-listed IPs skip the IP-host penalty

    reader, _ = make_reader(allow="10.0.0.0/8")
    with pytest.raises(ToolError, match="192.168.1.10"):
        await reader.read("http://mixed.test/")


def test_allow_list_parsing() -> None:
    allow = AllowList.parse(" wiki.corp , *.intra.example,.lab , 192.168.0.0/16, ::1, ")
    assert allow.allows_host("wiki.corp") and allow.allows_host("WIKI.CORP.")
    assert allow.allows_host("a.intra.example") and allow.allows_host("x.y.lab")
    assert not allow.allows_host("intra.example.evil.test") and not allow.allows_host("wiki.corp.evil.test")
    assert allow.allows_ip(ipaddress.ip_address("192.168.4.4")) and allow.allows_ip(ipaddress.ip_address("::1"))
    assert not allow.allows_ip(ipaddress.ip_address("10.0.0.1"))
    assert AllowList.parse(["10.0.0.0/8"]).allows_host("10.2.3.4")
    assert AllowList.parse(None) == AllowList()


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("127.8.8.8", "a loopback address"),
        ("172.16.0.1", "a private address"),
        ("192.168.0.1", "a private address"),
        ("fc00::1", "a private address"),
        ("169.254.1.1", "a link-local address"),
        ("ff02::1", "a multicast address"),
        ("::", "an unspecified address"),
        ("100.127.255.255", "a carrier-grade NAT (100.64.0.0/10) address"),
        ("240.0.0.1", "a private address"),  # reserved 240/4; Python groups it under is_private
        ("::ffff:8.8.8.8", "an IPv4-mapped IPv6 address (of 8.8.8.8)"),
        ("2002:7f00:1::", "a 6to4/NAT64 address embedding 127.0.0.1"),
        ("64:ff9b::a00:1", "a 6to4/NAT64 address embedding 10.0.0.1"),
    ],
)
def test_address_classification(address: str, problem: str | None) -> None:
    assert address_problem(ipaddress.ip_address(address)) == problem


async def test_low_credibility_sources_are_not_fetched() -> None:

    reader, seen = make_reader()
    with pytest.raises(ToolError, match=r"not fetched: low credibility .*URL shortener"):
        await reader.read("https://bit.ly/3xyz")
    with pytest.raises(ToolError, match=r"not fetched: low credibility .*raw IP address"):
        await reader.read(f"http://{PUBLIC}/")
    assert seen == []
    strict, _ = make_reader(threshold=0.5)
    with pytest.raises(ToolError, match=r"not fetched: low credibility \(0.50 <= 0.50\)"):
        await strict.read("https://example.test/")


async def test_dns_rebinding_cannot_redirect_the_connection() -> None:
    """The name is resolved once per hop; a second, different answer is never used."""
    answers = iter([[PUBLIC], ["127.0.0.1"]])
    calls: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        calls.append(host)
        return next(answers)

    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, text="public page", headers={"content-type": "text/plain"})

    fetcher = SafeFetcher(
        SsrfGuard(AllowList(), rebinding), fetch_limits(Settings()), transport=httpx.MockTransport(record)
    )
    resource = await fetcher.fetch("http://rebind.test/")
    assert calls == ["rebind.test"]
    assert seen[0].url.host == PUBLIC and resource.body == b"public page"


@pytest.mark.parametrize("url", ["http://2130706433/", "http://127.1/", "http://0x7f.0.0.1/"])
async def test_numeric_ipv4_spellings_are_resolved_and_refused(url: str) -> None:
    # The real resolver: getaddrinfo parses numeric hosts itself, no DNS traffic.
    with pytest.raises(ToolError, match="resolves to 127.0.0.1, which is a loopback address"):
        await SsrfGuard().vet(url)
