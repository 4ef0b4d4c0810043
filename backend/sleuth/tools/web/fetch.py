"""Fetch one web resource safely: SSRF-vetted and IP-pinned hops, manual redirects, timeouts, size cap."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from sleuth.tools.base import ToolError
from sleuth.tools.web.ssrf import SsrfGuard, VettedTarget

USER_AGENT = "Sleuth/0.1 (deep-research agent; +https://github.com/sleuth)"
ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.1"


@dataclass(frozen=True)
class FetchLimits:
    connect_timeout_s: float
    read_timeout_s: float
    total_timeout_s: float  # bounds a server that drips one byte per read timeout
    max_bytes: int
    max_redirects: int


@dataclass(frozen=True)
class FetchedResource:
    url: str  # the final URL, after redirects
    content_type: str  # lower-case MIME type without parameters; "" when absent
    charset: str | None
    body: bytes
    truncated: bool  # the body was cut at the size cap


class SafeFetcher:
    """GETs a URL hop by hop; every hop is vetted by the guard and connected to its vetted address.

    `transport` is injectable so tests can stand in for the network (httpx.MockTransport).
    """

    def __init__(
        self,
        guard: SsrfGuard,
        limits: FetchLimits,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.guard = guard
        self.limits = limits
        self._transport = transport
        self._user_agent = user_agent

    async def fetch(self, url: str) -> FetchedResource:
        try:
            async with asyncio.timeout(self.limits.total_timeout_s):
                return await self._follow(url)
        except TimeoutError:
            raise ToolError(f"timed out after {self.limits.total_timeout_s:g} s fetching {url}") from None

    async def _follow(self, url: str) -> FetchedResource:
        limits = self.limits
        timeout = httpx.Timeout(limits.read_timeout_s, connect=limits.connect_timeout_s)
        # trust_env=False: an environment proxy would connect on our behalf and defeat IP pinning.
        async with httpx.AsyncClient(
            transport=self._transport, timeout=timeout, follow_redirects=False, trust_env=False
        ) as client:
            current = url
            for _hop in range(limits.max_redirects + 1):
                target = await self.guard.vet(current)
                try:
                    response = await client.send(self._request(client, target), stream=True)
                except httpx.TimeoutException:
                    raise ToolError(f"timed out connecting to or reading from {target.url.host}") from None
                except httpx.HTTPError as exc:
                    raise ToolError(f"could not fetch {current}: {type(exc).__name__}") from None
                try:
                    if response.is_redirect:
                        current = _redirect_target(target, response.headers["location"])
                        continue
                    if response.status_code >= 400:
                        raise ToolError(f"HTTP {response.status_code} from {current}")
                    return await self._read_body(response, current)
                finally:
                    await response.aclose()
            raise ToolError(f"refused: more than {limits.max_redirects} redirects starting at {url}")

    def _request(self, client: httpx.AsyncClient, target: VettedTarget) -> httpx.Request:
        # Connect to the vetted IP; the Host header and TLS SNI/certificate check keep the real name.
        headers = {"Host": target.host_header, "User-Agent": self._user_agent, "Accept": ACCEPT}
        return client.build_request("GET", target.pinned_url, headers=headers, extensions=target.tls_extensions)

    async def _read_body(self, response: httpx.Response, url: str) -> FetchedResource:
        cap = self.limits.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise ToolError(f"refused: {url} is {int(declared)} bytes, over the {cap}-byte cap")
        chunks: list[bytes] = []
        size = 0
        truncated = False
        try:
            # Decoded bytes are counted, so a small compressed bomb cannot expand past the cap.
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:
                    truncated = True
                    break
        except httpx.TimeoutException:
            raise ToolError(f"timed out reading {url}") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"could not read {url}: {type(exc).__name__}") from None
        body = b"".join(chunks)[:cap]
        mime, _, params = response.headers.get("content-type", "").partition(";")
        return FetchedResource(
            url=url,
            content_type=mime.strip().lower(),
            charset=_charset(params),
            body=body,
            truncated=truncated,
        )


def _redirect_target(target: VettedTarget, location: str) -> str:
    # Relative locations resolve against the URL as requested (the name), not the pinned IP.
    try:
        return str(target.url.join(location.strip()))
    except (httpx.InvalidURL, ValueError):
        raise ToolError(f"refused: invalid redirect location {location[:200]!r}") from None


def _charset(params: str) -> str | None:
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return None
