"""The set of providers and readers one run uses, with merged, de-duplicated search."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace

from sleuth.stream.documents import Document, normalise_url
from sleuth.tools.base import Page, PageReader, QuestionRouted, SearchProvider, SourceRoute, ToolError
from sleuth.tools.mcp.hub import McpHub, McpTool


@dataclass
class SearchOutcome:
    documents: list[Document]
    errors: list[str] = field(default_factory=list)  # one message per provider that failed


@dataclass
class Toolbox:
    providers: list[SearchProvider]
    readers: list[PageReader]
    sources: list[str] = field(default_factory=list)  # the source names searched, for `run_start`
    routes: list[SourceRoute] = field(default_factory=list)  # how the run's question was routed, for `run_start`
    mcp: McpHub | None = None  # the process's MCP servers, whose tools the agents may call
    mcp_servers: tuple[str, ...] | None = None  # the servers a request chose; None: all of them

    def mcp_tools(self) -> list[McpTool]:
        """The MCP tools this run's agents may call (once the servers have started)."""
        if self.mcp is None:
            return []
        return [tool for tool in self.mcp.tools() if self.mcp_servers is None or tool.server in self.mcp_servers]

    def for_question(self, question: str) -> Toolbox:
        """This toolbox with its searches sent to the sources that fit `question` (where a provider
        can route; the others search as before)."""
        providers: list[SearchProvider] = []
        routes: list[SourceRoute] = []
        for provider in self.providers:
            if isinstance(provider, QuestionRouted):
                routed, found = provider.for_question(question)
                providers.append(routed)
                routes.extend(found)
            else:
                providers.append(provider)
        return replace(self, providers=providers, routes=routes)

    @property
    def provider_label(self) -> str:
        return ",".join(provider.name for provider in self.providers)

    async def search(self, query: str, *, limit: int) -> SearchOutcome:
        """Ask every provider at once; merge by normalised URL, interleaving their rankings."""
        results = await asyncio.gather(
            *(provider.search(query, limit=limit) for provider in self.providers), return_exceptions=True
        )
        errors: list[str] = []
        ranked: list[list[Document]] = []
        for provider, result in zip(self.providers, results, strict=True):
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                errors.append(
                    f"{provider.name}: {result}"
                    if isinstance(result, ToolError)
                    else f"{provider.name}: {type(result).__name__}: {result}"
                )
            else:
                ranked.append(result)
        merged: list[Document] = []
        seen: set[str] = set()
        for rank in range(max((len(r) for r in ranked), default=0)):
            for docs in ranked:
                if rank < len(docs) and normalise_url(docs[rank].url) not in seen:
                    seen.add(normalise_url(docs[rank].url))
                    merged.append(docs[rank])
        return SearchOutcome(documents=merged[:limit], errors=errors)

    async def read(self, url: str) -> Page:
        for reader in self.readers:
            if reader.handles(url):
                return await reader.read(url)
        raise ToolError(f"No reader can open {url!r}.")
