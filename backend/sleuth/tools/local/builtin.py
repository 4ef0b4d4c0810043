"""The built-in collection: the Python language reference shipped with CPython (`pydoc_data.topics`)."""

from __future__ import annotations

import importlib.util
import os
import sys
from functools import partial
from pydoc_data.topics import topics

from sleuth.tools.extraction.blocks import underlines
from sleuth.tools.local.extract import Extracted
from sleuth.tools.local.indexer import IndexReport, Source, sync
from sleuth.tools.local.store import CorpusStore
from sleuth.tools.local.urls import BUILTIN_COLLECTION


def topic_title(topic: str, text: str) -> str:
    """The topic's heading (its first line when underlined, as pydoc writes them), else the topic key."""
    lines = text.lstrip("\n").splitlines()
    if len(lines) >= 2 and underlines(lines[0], lines[1]):
        return lines[0].strip()
    return topic


def _parsed(title: str, text: str, _data: bytes) -> Extracted:
    return Extracted(title=title, text=text)


def builtin_sources() -> list[Source]:
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
                read=partial(bytes, data),
                parse=partial(_parsed, title, text.strip()),
            )
        )
    return sources


_FINGERPRINT_KEY = "builtin_fingerprint"


def builtin_fingerprint() -> str:
    """Changes when CPython's topics file does: its path, size and mtime, and the interpreter's version."""
    spec = importlib.util.find_spec("pydoc_data.topics")
    origin = spec.origin if spec is not None and spec.origin else ""
    try:
        info = os.stat(origin)
    except OSError:
        return f"{sys.version}|{origin}"
    return f"{sys.version}|{origin}|{info.st_size}|{info.st_mtime_ns}"


def sync_builtin(store: CorpusStore) -> IndexReport | None:
    """Index (or refresh, after a CPython upgrade) the built-in collection.

    A read-only fingerprint check first: when nothing changed (every run but the first) no topic is
    loaded and no write lock is taken. Returns None when the check found nothing to do.
    """
    fingerprint = builtin_fingerprint()
    if store.collection(BUILTIN_COLLECTION) is not None and store.get_meta(_FINGERPRINT_KEY) == fingerprint:
        return None
    with store.transaction():
        collection = store.upsert_collection(BUILTIN_COLLECTION, "builtin", None)
    report = sync(store, collection, builtin_sources())
    with store.transaction():
        store.set_meta(_FINGERPRINT_KEY, fingerprint)
    return report
