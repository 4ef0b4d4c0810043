"""The one entry point the toolbox builder calls."""

from __future__ import annotations

from sleuth.config import Settings
from sleuth.tools.base import PageReader, SearchProvider
from sleuth.tools.local.corpus import LocalCorpus, db_path_for
from sleuth.tools.local.providers import LocalReader, LocalSearch


def build_local_tools(
    settings: Settings, collections: tuple[str, ...] | None = None
) -> tuple[SearchProvider, PageReader]:
    """The `local` search provider and the corpus:// reader, sharing one lazily prepared corpus.

    `collections` limits search to exactly those collections (the sources chosen for a request);
    None means the settings decide. Nothing is opened or indexed here: the first search or read
    does that, in a worker thread.
    """
    corpus = LocalCorpus(
        db_path_for(settings.data_dir),
        settings.corpus,
        collections=collections,
        max_file_bytes=settings.index_max_file_bytes,
        check_every_s=settings.corpus_check_s,
    )
    return LocalSearch(corpus), LocalReader(corpus)
