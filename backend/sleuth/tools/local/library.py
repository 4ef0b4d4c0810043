"""Collections and documents as the API and `sleuth show` see them: list, open, upload, delete.

Uploads go through the same extraction and chunking as `sleuth index`. A batch is all-or-nothing:
every file is checked and extracted before the one transaction that writes them, so a refused
file leaves the collection exactly as it was.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sleuth.tools.local.builtin import sync_builtin
from sleuth.tools.local.chunking import iter_chunks
from sleuth.tools.local.extract import SUPPORTED_SUFFIXES, Extracted, ExtractError, extract, is_supported
from sleuth.tools.local.schema import connect
from sleuth.tools.local.store import CorpusStore
from sleuth.tools.local.urls import BUILTIN_COLLECTION, is_valid_name, parse_corpus_url


class LibraryError(ValueError):
    """A request the library refuses; `status` is the HTTP status that fits."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class DocumentText:
    id: str
    url: str
    title: str
    collection: str
    path: str
    text: str


@dataclass(frozen=True)
class DocumentEntry:
    id: str
    url: str
    title: str
    path: str
    size: int


@dataclass(frozen=True)
class Upload:
    filename: str
    data: bytes


@dataclass(frozen=True)
class UploadLimits:
    max_file_bytes: int
    max_files: int


@contextmanager
def open_store(db_path: Path) -> Iterator[CorpusStore]:
    """The index, with the built-in reference present (a fingerprint check once it is)."""
    with closing(connect(db_path)) as conn:
        store = CorpusStore(conn)
        sync_builtin(store)
        yield store


def _text(row: sqlite3.Row) -> DocumentText:
    return DocumentText(row["doc_key"], row["url"], row["title"], row["name"], row["path"], row["text"])


_DOC_SELECT = (
    "SELECT d.doc_key, d.url, d.title, d.path, d.text, c.name FROM documents d"
    " JOIN collections c ON c.id = d.collection_id"
)


def document_by_id(db_path: Path, doc_id: str) -> DocumentText | None:
    with open_store(db_path) as store:
        row = store.conn.execute(f"{_DOC_SELECT} WHERE d.doc_key = ?", (doc_id,)).fetchone()
    return None if row is None else _text(row)


def document_by_url(db_path: Path, url: str) -> DocumentText | None:
    try:
        collection, path = parse_corpus_url(url)
    except ValueError:
        return None
    with open_store(db_path) as store:
        row = store.conn.execute(f"{_DOC_SELECT} WHERE c.name = ? AND d.path = ?", (collection, path)).fetchone()
    return None if row is None else _text(row)


def list_documents(db_path: Path, collection: str) -> list[DocumentEntry]:
    with open_store(db_path) as store:
        found = store.collection(collection)
        if found is None:
            raise LibraryError(f"no collection named {collection!r}", 404)
        rows = store.conn.execute(
            "SELECT doc_key, url, title, path, size FROM documents WHERE collection_id = ? ORDER BY path",
            (found.id,),
        ).fetchall()
    return [DocumentEntry(r["doc_key"], r["url"], r["title"], r["path"], r["size"]) for r in rows]


def _writable(store: CorpusStore, name: str) -> None:
    found = store.collection(name)
    if found is None:
        raise LibraryError(f"no collection named {name!r}", 404)
    if found.kind == "builtin":
        raise LibraryError(f"{name!r} is the built-in reference and cannot be changed", 409)


def delete_collection(db_path: Path, name: str) -> int:
    """Remove a collection; returns how many documents it had."""
    with open_store(db_path) as store:
        _writable(store, name)
        count = len(store.documents(store.collection(name).id))  # type: ignore[union-attr]  # _writable: it exists
        store.remove_collection(name)
    return count


def delete_document(db_path: Path, name: str, doc_id: str) -> None:
    with open_store(db_path) as store:
        _writable(store, name)
        with store.transaction():
            cur = store.conn.execute(
                "DELETE FROM documents WHERE doc_key = ?"
                " AND collection_id = (SELECT id FROM collections WHERE name = ?)",
                (doc_id, name),
            )
            if cur.rowcount == 0:
                raise LibraryError(f"no document {doc_id!r} in collection {name!r}", 404)


def _safe_name(filename: str) -> str:
    """The upload's file name without any folder part (a name is never a path into the server)."""
    name = PurePosixPath(filename.replace("\\", "/")).name.strip()
    if not name or name in (".", "..") or name.startswith("."):
        raise LibraryError(f"file name {filename!r} is not usable", 422)
    return name


def _check(upload: Upload, limits: UploadLimits) -> tuple[str, Extracted]:
    name = _safe_name(upload.filename)
    if not is_supported(Path(name)):
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise LibraryError(f"{name}: file type not supported (supported: {kinds})", 415)
    if len(upload.data) > limits.max_file_bytes:
        cap = limits.max_file_bytes / 1_000_000
        raise LibraryError(f"{name}: {len(upload.data) / 1_000_000:.1f} MB is over the {cap:.1f} MB limit", 413)
    try:
        return name, extract(Path(name), upload.data)
    except ExtractError as exc:
        raise LibraryError(f"{name}: {exc}", 422) from None


def add_uploads(db_path: Path, name: str, uploads: list[Upload], limits: UploadLimits) -> list[DocumentEntry]:
    """Add files to collection `name` (created as kind `uploaded` if new), all or none."""
    if not is_valid_name(name):
        raise LibraryError(f"invalid collection name {name!r}: use lower-case letters, digits, '.', '_' and '-'")
    if not uploads:
        raise LibraryError("no files in the upload")
    if len(uploads) > limits.max_files:
        raise LibraryError(f"{len(uploads)} files is over the limit of {limits.max_files} per upload", 413)
    checked = [(_check(upload, limits), upload) for upload in uploads]
    names = [checked_name for (checked_name, _), _ in checked]
    if len(set(names)) != len(names):
        raise LibraryError("two files in the upload have the same name", 422)
    with open_store(db_path) as store:
        existing = store.collection(name)
        if existing is not None and existing.kind != "uploaded":
            what = "the built-in reference" if name == BUILTIN_COLLECTION else f"a folder ({existing.root})"
            raise LibraryError(f"collection {name!r} belongs to {what}; upload into another name", 409)
        with store.transaction():
            collection = existing or store.upsert_collection(name, "uploaded", None)
            for (path, extracted), upload in checked:
                store.put_document(
                    collection,
                    path,
                    title=extracted.title,
                    text=extracted.text,
                    mtime=None,
                    size=len(upload.data),
                    digest=hashlib.sha256(upload.data).hexdigest(),
                    chunks=iter_chunks(extracted.text, extracted.title),
                )
            store.touch_collection(collection.id)
    entries = {e.path: e for e in list_documents(db_path, name)}
    return [entries[path] for path in names]
