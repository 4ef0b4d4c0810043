"""The one entry point the toolbox builder calls."""

from __future__ import annotations

from sleuth.config import Settings
from sleuth.tools.base import PageReader, SearchProvider
from sleuth.tools.local.corpus import LocalCorpus, db_path_for
from sleuth.tools.local.providers import LocalReader, LocalSearch


def build_local_tools(settings: Settings) -> tuple[SearchProvider, PageReader]:
    """The `local` search provider and the corpus:// reader, sharing one lazily prepared corpus.

    Nothing is opened or indexed here: the first search or read does that, in a worker thread.
    """
    corpus = LocalCorpus(db_path_for(settings.data_dir), settings.corpus)
    return LocalSearch(corpus), LocalReader(corpus)
