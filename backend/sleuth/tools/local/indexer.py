"""Incremental sync of a collection with its sources: skip unchanged, re-index changed, drop deleted.

Reading and parsing happen outside the write lock; the lock is held only while a batch of parsed
documents is written. A sync that finds nothing changed never takes the lock at all, so runs that
check the corpus do not queue behind each other or behind `sleuth index`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from sleuth.tools.local.chunking import iter_chunks
from sleuth.tools.local.extract import EXTRACTION_VERSION, Extracted, ExtractError, Skip, extract
from sleuth.tools.local.scan import read_regular, scan
from sleuth.tools.local.store import Collection, CorpusStore, StoredDocument

# Files per transaction: large enough to amortise commits, small enough not to hold the write lock long.
BATCH = 100
# Text per transaction: a few big files write alone rather than pile up in memory.
BATCH_CHARS = 20_000_000
DEFAULT_MAX_FILE_BYTES = 50_000_000


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
    skipped: list[tuple[str, str]] = field(default_factory=list)  # entries the folder walk left out, and why

    @property
    def indexed(self) -> int:
        return self.added + self.updated


@dataclass
class FolderScan:
    sources: list[Source]
    skipped: list[tuple[str, str]]
    warnings: list[tuple[str, str]]


def scan_folder(root: Path, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> FolderScan:
    """Supported files under `root` (hidden ones skipped, nothing outside `root` read), sorted by path."""
    found = scan(root, max_bytes=max_bytes)
    sources = [
        Source(
            path=f.path,
            mtime=f.mtime,
            size=f.size,
            read=partial(read_regular, f.real, max_bytes),
            parse=partial(extract, f.real),
        )
        for f in found.files
    ]
    return FolderScan(sources, found.skipped, found.renamed)


@dataclass
class _Parsed:
    source: Source
    old: StoredDocument | None
    extracted: Extracted
    size: int
    digest: str


def sync(
    store: CorpusStore,
    collection: Collection,
    sources: Iterable[Source],
    *,
    progress: Callable[[Source], None] | None = None,
    remove_missing: bool = True,
) -> IndexReport:
    """Bring `collection` in line with `sources`; one bad source is reported, never fatal.
    `progress` hears of each source once it is done with."""
    report = IndexReport(collection=collection.name)
    stored = store.documents(collection.id)
    seen: set[str] = set()
    batch: list[_Parsed] = []
    drops: list[StoredDocument] = []
    touches: list[tuple[StoredDocument, Source, int]] = []
    chars = 0

    def flush() -> None:
        nonlocal chars
        if batch or drops or touches:
            _write(store, collection, batch, drops, touches)
            batch.clear()
            drops.clear()
            touches.clear()
            chars = 0

    for source in sources:
        seen.add(source.path)
        old = stored.get(source.path)
        outcome = _prepare(source, old, report)
        if isinstance(outcome, _Parsed):
            batch.append(outcome)
            chars += len(outcome.extracted.text)
        elif outcome == "touch" and old is not None:
            touches.append((old, source, source.size))
        elif outcome == "drop" and old is not None:
            drops.append(old)
        if progress is not None:
            progress(source)
        if len(batch) + len(drops) + len(touches) >= BATCH or chars >= BATCH_CHARS:
            flush()
    if remove_missing:
        for path, doc in stored.items():
            if path not in seen:
                drops.append(doc)
                report.removed += 1
    flush()
    if report.indexed or report.removed or not store.has_profile(collection.id):
        with store.transaction():
            store.refresh_profile(collection.id)
    return report


def _prepare(source: Source, old: StoredDocument | None, report: IndexReport) -> _Parsed | str:
    """Read and parse one source (no lock held): a parsed document, or "skip" / "touch" / "drop"."""
    # A document extracted by older rules is read again, as if its file had changed.
    current = old if old is not None and old.extraction == EXTRACTION_VERSION else None
    if current and source.mtime is not None and current.mtime == source.mtime and current.size == source.size:
        report.unchanged += 1
        return "skip"
    try:
        data = source.read()
    except OSError as exc:
        report.errors.append((source.path, f"cannot read: {exc.strerror or exc}"))
        return "drop"  # the old text no longer matches the file, so it must not be served
    digest = hashlib.sha256(data).hexdigest()
    if current and current.hash == digest:
        report.unchanged += 1
        return "touch"
    try:
        extracted = source.parse(data)
    except Skip as exc:
        report.skipped.append((source.path, str(exc)))
        return "drop"
    except ExtractError as exc:
        report.errors.append((source.path, str(exc)))
        return "drop"
    except Exception as exc:  # noqa: BLE001 — a parser bug on one odd file must not stop the run
        report.errors.append((source.path, f"{type(exc).__name__}: {exc}"))
        return "drop"
    size = len(data)
    del data  # the raw bytes are not needed while the text is written
    report.warnings.extend((source.path, warning) for warning in extracted.warnings)
    if old is None:
        report.added += 1
    else:
        report.updated += 1
    return _Parsed(source, old, extracted, size, digest)


def _write(
    store: CorpusStore,
    collection: Collection,
    parsed: list[_Parsed],
    drops: list[StoredDocument],
    touches: list[tuple[StoredDocument, Source, int]],
) -> None:
    with store.transaction():
        for doc in drops:
            store.delete_document(doc.id)
        for old, source, size in touches:
            store.touch_document(old.id, mtime=source.mtime, size=size)
        for item in parsed:
            store.put_document(
                collection,
                item.source.path,
                title=item.extracted.title,
                text=item.extracted.text,
                mtime=item.source.mtime,
                size=item.size,
                digest=item.digest,
                chunks=iter_chunks(item.extracted.text, item.extracted.title),
            )
        if parsed or drops:
            store.touch_collection(collection.id)
