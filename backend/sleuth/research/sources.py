"""Per-run registry of every document any tool returned, and which of them were opened."""

from __future__ import annotations

from sleuth.stream.documents import Document, normalise_url


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

    def was_fetched(self, document_id: str) -> bool:
        return document_id in self._fetched

    def __contains__(self, document_id: object) -> bool:
        return document_id in self._by_id

    @property
    def seen(self) -> int:
        return len(self._by_id)

    @property
    def fetched(self) -> int:
        return len(self._fetched)
