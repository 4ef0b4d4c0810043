"""`local` search provider and `corpus://` page reader: async faces of LocalCorpus, and
`build_local_tools`, the one entry point the toolbox builder calls."""

from __future__ import annotations

import asyncio

from sleuth.config import Settings
from sleuth.stream.documents import Document
from sleuth.tools.base import Page, PageReader, SearchProvider, SourceRoute, ToolError
from sleuth.tools.local.access import BUILT_IN, Viewer
from sleuth.tools.local.corpus import LocalCorpus, db_path_for
from sleuth.tools.local.urls import is_corpus_url


class LocalSearch:
    """SearchProvider over the local FTS5 index: one Document per document, its best chunk as snippet.

    Bound to a run's question (`for_question`), each search goes to the collections that fit the
    question and its own query, when no collection was chosen."""

    name = "local"

    def __init__(self, corpus: LocalCorpus, question: str | None = None) -> None:
        self.corpus = corpus
        self.question = question

    def for_question(self, question: str) -> tuple[SearchProvider, list[SourceRoute]]:
        """A search bound to `question`, and how the question alone routes (for the run's header)."""
        try:
            routing = self.corpus.route(question)
        except ToolError:
            routing = None  # search reports an unreadable index; the header just does not route
        # One collection in scope: nothing to route, the sources alone say what is searched.
        routed = routing is not None and len(routing.fits) > 1
        routes = [SourceRoute(f.name, f.searched, f.reason) for f in routing.fits] if routing and routed else []
        return LocalSearch(self.corpus, question), routes

    async def search(self, query: str, *, limit: int) -> list[Document]:
        # SQLite calls block; a worker thread keeps the event loop (and the other lanes) moving.
        return await asyncio.to_thread(self.corpus.search, query, limit, question=self.question)


class LocalReader:
    """PageReader for corpus:// URLs: returns the whole document's text."""

    name = "local"

    def __init__(self, corpus: LocalCorpus) -> None:
        self.corpus = corpus

    def handles(self, url: str) -> bool:
        return is_corpus_url(url)

    async def read(self, url: str) -> Page:
        return await asyncio.to_thread(self.corpus.read, url)


def build_local_tools(
    settings: Settings, collections: tuple[str, ...] | None = None, *, viewer: Viewer = BUILT_IN
) -> tuple[SearchProvider, PageReader]:
    """The `local` search provider and the corpus:// reader, sharing one lazily prepared corpus.

    `collections` limits search to exactly those collections (the sources chosen for a request);
    None means the settings decide. Either way, only the collections `viewer` (the run's owner)
    sees are searched and opened. Nothing is opened or indexed here: the first search or read
    does that, in a worker thread.
    """
    corpus = LocalCorpus(
        db_path_for(settings.data_dir),
        settings.corpus,
        collections=collections,
        max_file_bytes=settings.index_max_file_bytes,
        check_every_s=settings.corpus_check_s,
        viewer=viewer,
    )
    return LocalSearch(corpus), LocalReader(corpus)
