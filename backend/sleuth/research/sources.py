"""Per-run registry of every document any tool returned, and which of them were opened."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sleuth.core.markdown import rewrite_citations
from sleuth.stream.documents import Document, normalise_url
from sleuth.stream.packets import NumberedSource

# A URL's reason to be left out of a report (a shortener, an IP host, a non-http scheme), or None.
UnsafeUrlCheck = Callable[[str], str | None]


class SourceRegistry:
    """Documents by id and by normalised URL. Citations are verified against it."""

    def __init__(self) -> None:
        self._by_id: dict[str, Document] = {}
        self._by_url: dict[str, str] = {}
        self._fetched: set[str] = set()

    def add(self, document: Document, *, fetched: bool = False) -> Document:
        """Register a document; the first sighting wins, but a later one may fill a missing title or snippet."""
        known = self._by_id.get(document.id)
        if known is None:
            self._by_id[document.id] = document
            self._by_url[normalise_url(document.url)] = document.id
            known = document
        elif (not known.title and document.title) or (not known.snippet and document.snippet):
            known = known.model_copy(
                update={
                    "title": known.title or document.title,
                    "snippet": known.snippet or document.snippet,
                }
            )
            self._by_id[document.id] = known
        if fetched:
            self._fetched.add(document.id)
        return known

    def get(self, document_id: str) -> Document | None:
        return self._by_id.get(document_id)

    def by_url(self, url: str) -> Document | None:
        document_id = self._by_url.get(normalise_url(url))
        return self._by_id.get(document_id) if document_id else None

    def fetched_ids(self) -> frozenset[str]:
        return frozenset(self._fetched)

    def __contains__(self, document_id: object) -> bool:
        return document_id in self._by_id

    @property
    def seen(self) -> int:
        return len(self._by_id)

    @property
    def titles(self) -> list[str]:
        """The title of every document seen, in order of first sight."""
        return [document.title for document in self._by_id.values()]

    @property
    def fetched(self) -> int:
        return len(self._fetched)


@dataclass
class Numbering:
    """Citation numbers from 1 in order of first sight: an agent's own, or the run's global one."""

    by_number: dict[int, Document] = field(default_factory=dict)
    by_id: dict[str, int] = field(default_factory=dict)

    def number(self, document: Document) -> int:
        if document.id not in self.by_id:
            n = len(self.by_number) + 1
            self.by_number[n] = document
            self.by_id[document.id] = n
        return self.by_id[document.id]

    def numbered_sources(self) -> list[NumberedSource]:
        return [NumberedSource(number=n, **doc.model_dump()) for n, doc in sorted(self.by_number.items())]


@dataclass
class CollapsedReport:
    text: str
    cited: list[Document]  # in the order of their global numbers
    dropped: list[int]  # local numbers that pointed at no document the agent was shown


def collapse_citations(reports: list[tuple[str, Numbering]], numbering: Numbering) -> list[CollapsedReport]:
    """Renumber each agent's `[n]` into the run's global numbering, in tab order.

    A document already cited elsewhere keeps its number; a number the agent was never shown
    is removed from the text.
    """
    return [_collapse_one(text, local, numbering) for text, local in reports]


def _collapse_one(text: str, local: Numbering, numbering: Numbering) -> CollapsedReport:
    dropped: list[int] = []
    cited_ids: list[str] = []

    def to_global(n: int) -> int | None:
        document = local.by_number.get(n)
        if document is None:
            dropped.append(n)
            return None
        if document.id not in cited_ids:
            cited_ids.append(document.id)
        return numbering.number(document)

    new_text = rewrite_citations(text, to_global)
    cited = sorted((numbering.by_number[numbering.by_id[i]] for i in cited_ids), key=lambda d: numbering.by_id[d.id])
    return CollapsedReport(text=new_text, cited=cited, dropped=dropped)
