"""Folders as collections: pick (or reuse) the collection for a folder and sync it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from sleuth.tools.local.indexer import DEFAULT_MAX_FILE_BYTES, IndexReport, Source, scan_folder, sync
from sleuth.tools.local.store import Collection, CorpusStore
from sleuth.tools.local.urls import is_valid_name, slugify


def folder_collection(store: CorpusStore, root: Path, name: str | None, kind: str) -> Collection:
    """The collection for folder `root`: reused if the folder is already indexed, else created.

    Raises ValueError for an invalid `name`, or one that belongs to another folder or the built-in.
    """
    if name is not None and not is_valid_name(name):
        raise ValueError(f"invalid collection name {name!r}: use lower-case letters, digits, '.', '_' and '-'")
    resolved = str(root.resolve())
    existing = store.collection_by_root(resolved)
    if existing is not None:
        if name is not None and name != existing.name:
            # One folder, one collection: two names would index (and cite) every file twice.
            raise ValueError(f"{resolved} is already indexed as {existing.name!r}; remove that collection first")
        # `sleuth index` on an env folder promotes it to `indexed`; never demote the other way.
        if kind == "indexed" and existing.kind != "indexed":
            return store.upsert_collection(existing.name, kind, resolved)
        return existing
    candidate = name or slugify(root.resolve().name)
    taken = store.collection(candidate)
    if taken is not None and taken.root != resolved:
        if name is not None:
            owner = "the built-in reference" if taken.kind == "builtin" else taken.root
            raise ValueError(f"collection {name!r} already exists for {owner}")
        # A derived name that clashes gets a stable suffix from the folder path.
        candidate = f"{candidate[:55]}-{hashlib.sha1(resolved.encode()).hexdigest()[:6]}"
    return store.upsert_collection(candidate, kind, resolved)


def index_folder(
    store: CorpusStore,
    root: Path,
    *,
    name: str | None,
    kind: str,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    progress: Callable[[Source], None] | None = None,
    on_scanned: Callable[[int], None] | None = None,
) -> IndexReport:
    """Add or refresh folder `root` as a collection; `on_scanned` hears how many files were found."""
    existing = store.collection_by_root(str(root.resolve()))
    promote = kind == "indexed" and existing is not None and existing.kind != "indexed"
    if existing is None or (name is not None and name != existing.name) or promote:
        with store.transaction():
            collection = folder_collection(store, root, name, kind)
    else:
        collection = existing  # nothing to change: no write lock for a re-check
    found = scan_folder(root.resolve(), max_bytes=max_bytes)
    if on_scanned is not None:
        on_scanned(len(found.sources))
    report = sync(store, collection, found.sources, progress=progress)
    report.skipped.extend(found.skipped)
    report.warnings[:0] = found.warnings
    return report
