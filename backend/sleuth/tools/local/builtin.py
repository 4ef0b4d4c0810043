"""The built-in collection: the Python language reference shipped with CPython (`pydoc_data.topics`)."""

from __future__ import annotations

import re
from functools import partial

from sleuth.tools.local.extract import Extracted
from sleuth.tools.local.indexer import IndexReport, Source, sync
from sleuth.tools.local.store import CorpusStore
from sleuth.tools.local.urls import BUILTIN_COLLECTION

_UNDERLINE = re.compile(r"^([*=\-~^#+])\1{2,}\s*$")


def topic_title(topic: str, text: str) -> str:
    """The topic's heading (its first line when underlined, as pydoc writes them), else the topic key."""
    lines = text.lstrip("\n").splitlines()
    if len(lines) >= 2 and lines[0].strip() and _UNDERLINE.match(lines[1]):
        return lines[0].strip()
    return topic


def _constant(data: bytes) -> bytes:
    return data


def _topic(title: str, text: str, _data: bytes) -> Extracted:
    return Extracted(title=title, text=text)


def builtin_sources() -> list[Source]:
    from pydoc_data.topics import topics  # a ~0.5 MB dict; load only when indexing

    sources: list[Source] = []
    for topic in sorted(topics):
        text = topics[topic]
        data = text.encode("utf-8")
        title = topic_title(topic, text)
        sources.append(
            Source(
                path=topic,
                mtime=None,  # no file to stat: the content hash decides
                size=len(data),
                read=partial(_constant, data),
                parse=partial(_topic, title, text.strip()),
            )
        )
    return sources


def sync_builtin(store: CorpusStore) -> IndexReport:
    """Index (or refresh, after a CPython upgrade) the built-in collection; unchanged topics cost a hash."""
    with store.transaction():
        collection = store.upsert_collection(BUILTIN_COLLECTION, "builtin", None)
    return sync(store, collection, builtin_sources())
