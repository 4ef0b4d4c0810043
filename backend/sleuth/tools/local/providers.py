"""`local` search provider and `corpus://` page reader: async faces of LocalCorpus."""

from __future__ import annotations

import asyncio

from sleuth.stream.documents import Document
from sleuth.tools.base import Page
from sleuth.tools.local.corpus import LocalCorpus
from sleuth.tools.local.urls import is_corpus_url


class LocalSearch:
    """SearchProvider over the local FTS5 index: one Document per document, its best chunk as snippet."""

    name = "local"

    def __init__(self, corpus: LocalCorpus) -> None:
        self.corpus = corpus

    async def search(self, query: str, *, limit: int) -> list[Document]:
        # SQLite calls block; a worker thread keeps the event loop (and the other lanes) moving.
        return await asyncio.to_thread(self.corpus.search, query, limit)


class LocalReader:
    """PageReader for corpus:// URLs: returns the whole document's text."""

    name = "local"

    def __init__(self, corpus: LocalCorpus) -> None:
        self.corpus = corpus

    def handles(self, url: str) -> bool:
        return is_corpus_url(url)

    async def read(self, url: str) -> Page:
        return await asyncio.to_thread(self.corpus.read, url)
