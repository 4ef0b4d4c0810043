"""The narrow interface every search provider and page reader implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from sleuth.stream.documents import Document


class ToolError(Exception):
    """A tool failed in a way the agent (and the user) should be told about; the run goes on."""


class SourceBlocked(ToolError):
    """A source refused by policy rather than lost to a failure, so reports can count the two apart."""

    def __init__(self, policy: Literal["credibility", "ssrf"], message: str) -> None:
        super().__init__(message)
        self.policy = policy


@dataclass
class Page:
    """An opened document: its metadata and its full text."""

    document: Document
    text: str


@runtime_checkable
class SearchProvider(Protocol):
    """Answers a query with ranked documents. `name` appears in `search_start.provider`."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, *, limit: int) -> list[Document]: ...


@dataclass(frozen=True)
class SourceRoute:
    """Whether a run's question sends its searches to one source, and why (one short line)."""

    name: str
    searched: bool
    reason: str


@runtime_checkable
class QuestionRouted(Protocol):
    """A search provider that can narrow its sources to those that fit a run's question."""

    def for_question(self, question: str) -> tuple[SearchProvider, list[SourceRoute]]: ...


@runtime_checkable
class PageReader(Protocol):
    """Opens documents by URL. `handles` says whether this reader owns a URL."""

    @property
    def name(self) -> str: ...

    def handles(self, url: str) -> bool: ...

    async def read(self, url: str) -> Page: ...
