"""Incremental sync of a collection with its sources: skip unchanged, re-index changed, drop deleted."""

from __future__ import annotations

import hashlib
import os
import stat as statmode
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from sleuth.tools.local.chunking import chunk_text
from sleuth.tools.local.extract import Extracted, ExtractError, extract, is_supported
from sleuth.tools.local.store import Collection, CorpusStore, StoredDocument

# Files per transaction: large enough to amortise commits, small enough not to hold the write lock long.
BATCH = 100


@dataclass(frozen=True)
class Source:
    """One document to index: where it is (relative path), its stat, and how to get its text."""

    path: str
    mtime: float | None  # None: no cheap change signal, compare hashes
    size: int
    read: Callable[[], bytes]
    parse: Callable[[bytes], Extracted]


@dataclass
class IndexReport:
    collection: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (relative path, reason)
    warnings: list[tuple[str, str]] = field(default_factory=list)

    @property
    def indexed(self) -> int:
        return self.added + self.updated


def scan_folder(root: Path) -> list[Source]:
    """Supported files under `root` (hidden files and folders skipped), sorted by relative path."""
    sources: list[Source] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            file = Path(dirpath) / filename
            if filename.startswith(".") or not is_supported(file):
                continue
            try:
                stat = file.stat()
            except OSError:
                continue  # vanished, or a dangling link
            if not statmode.S_ISREG(stat.st_mode):
                continue  # sockets, fifos and the like: nothing to read
            rel = file.relative_to(root).as_posix()
            sources.append(
                Source(
                    path=rel,
                    mtime=stat.st_mtime,
                    size=stat.st_size,
                    read=file.read_bytes,
                    parse=partial(extract, file),
                )
            )
    return sources


def sync(
    store: CorpusStore,
    collection: Collection,
    sources: Iterable[Source],
    *,
    progress: Callable[[int], None] | None = None,
) -> IndexReport:
    """Bring `collection` in line with `sources`; one bad source is reported, never fatal."""
    report = IndexReport(collection=collection.name)
    stored = store.documents(collection.id)
    seen: set[str] = set()
    pending = 0
    store.conn.execute("BEGIN IMMEDIATE")
    try:
        for source in sources:
            seen.add(source.path)
            _sync_one(store, collection, source, stored.get(source.path), report)
            pending += 1
            if progress is not None:
                progress(1)
            if pending >= BATCH:
                store.conn.execute("COMMIT")
                store.conn.execute("BEGIN IMMEDIATE")
                pending = 0
        for path, doc in stored.items():
            if path not in seen:
                store.delete_document(doc.id)
                report.removed += 1
        if report.indexed or report.removed:
            store.touch_collection(collection.id)
        store.conn.execute("COMMIT")
    except BaseException:
        store.conn.execute("ROLLBACK")
        raise
    return report


def _sync_one(
    store: CorpusStore, collection: Collection, source: Source, old: StoredDocument | None, report: IndexReport
) -> None:
    if old is not None and source.mtime is not None and old.mtime == source.mtime and old.size == source.size:
        report.unchanged += 1
        return
    try:
        data = source.read()
    except OSError as exc:
        _fail(store, old, report, source.path, f"cannot read: {exc.strerror or exc}")
        return
    digest = hashlib.sha256(data).hexdigest()
    if old is not None and old.hash == digest:
        store.touch_document(old.id, mtime=source.mtime, size=len(data))
        report.unchanged += 1
        return
    try:
        extracted = source.parse(data)
    except ExtractError as exc:
        _fail(store, old, report, source.path, str(exc))
        return
    except Exception as exc:  # noqa: BLE001 — a parser bug on one odd file must not stop the run
        _fail(store, old, report, source.path, f"{type(exc).__name__}: {exc}")
        return
    report.warnings.extend((source.path, warning) for warning in extracted.warnings)
    store.put_document(
        collection,
        source.path,
        title=extracted.title,
        text=extracted.text,
        mtime=source.mtime,
        size=len(data),
        digest=digest,
        chunks=chunk_text(extracted.text, extracted.title),
    )
    if old is None:
        report.added += 1
    else:
        report.updated += 1


def _fail(store: CorpusStore, old: StoredDocument | None, report: IndexReport, path: str, reason: str) -> None:
    # The old text no longer matches the file, so it must not be served; the next run retries.
    if old is not None:
        store.delete_document(old.id)
    report.errors.append((path, reason))
