"""Collections and documents as the API and `sleuth show` see them: list, open, upload, delete.

Uploads go through the same extraction and chunking as `sleuth index`. Each file of a batch is
added or refused on its own, with a reason: the request is refused as a whole only for what is
wrong with it as a whole (the collection, the number of files, two files of one name). Files are
copied from the request in bounded reads, extracted one at a time by the injected extractor
(the server's bounds each file's time and memory), their text kept on disk meanwhile, and the
files that passed are written in one transaction, which checks the collection again: one deleted
meanwhile is a conflict, not a crash. While the files are extracted, the log gets a progress line
(files, megabytes, rate, time left) every `PROGRESS_LOG_S`, and one when they are done.

Every function takes the `Viewer` who asks (access.py): a collection they do not see is not found
(404), one they see but may not change is refused (403), and a new upload is theirs.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from sleuth.core.clock import Clock
from sleuth.core.throughput import Throughput
from sleuth.tools.local.access import BUILT_IN, Viewer, changes, sees, visible_sql
from sleuth.tools.local.builtin import sync_builtin
from sleuth.tools.local.chunking import iter_chunks
from sleuth.tools.local.extract import SUPPORTED_SUFFIXES, ExtractError, is_supported
from sleuth.tools.local.schema import connect
from sleuth.tools.local.store import Collection, CollectionStats, CorpusStore
from sleuth.tools.local.urls import BUILTIN_COLLECTION, is_valid_name, parse_corpus_url

log = logging.getLogger(__name__)

PROGRESS_LOG_S = 5.0


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
    """One file as the request brought it: its name, its size if known, and its bytes to read."""

    filename: str
    size: int | None
    stream: BinaryIO


@dataclass(frozen=True)
class UploadLimits:
    max_file_bytes: int
    max_files: int


@dataclass(frozen=True)
class Refusal:
    """A file of an upload that was not added, the HTTP status that fits, and why (one line)."""

    filename: str
    status: int
    reason: str

    @property
    def message(self) -> str:
        return f"{self.filename}: {self.reason}"


@dataclass(frozen=True)
class UploadResult:
    added: list[DocumentEntry]
    refused: list[Refusal]


class UploadRefused(LibraryError):
    """Every file of the upload was refused; `refused` says why for each."""

    def __init__(self, refused: list[Refusal]) -> None:
        statuses = {r.status for r in refused}
        super().__init__("; ".join(r.message for r in refused), statuses.pop() if len(statuses) == 1 else 422)
        self.refused = refused


# Extracts an upload: (its bytes saved on disk, its own name, which says its type, the file to
# write its text to) -> its title. Raises ExtractError with the reason for a refusal.
Extractor = Callable[[Path, str, Path], str]
_COPY_CHUNK = 1 << 20


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


def document_by_id(db_path: Path, doc_id: str, *, viewer: Viewer = BUILT_IN) -> DocumentText | None:
    seen, params = visible_sql(viewer)
    with open_store(db_path) as store:
        row = store.conn.execute(f"{_DOC_SELECT} WHERE d.doc_key = ?{seen}", (doc_id, *params)).fetchone()
    return None if row is None else _text(row)


def document_by_url(db_path: Path, url: str, *, viewer: Viewer = BUILT_IN) -> DocumentText | None:
    try:
        collection, path = parse_corpus_url(url)
    except ValueError:
        return None
    seen, params = visible_sql(viewer)
    with open_store(db_path) as store:
        row = store.conn.execute(
            f"{_DOC_SELECT} WHERE c.name = ? AND d.path = ?{seen}", (collection, path, *params)
        ).fetchone()
    return None if row is None else _text(row)


def document_urls(db_path: Path) -> dict[str, list[str]]:
    """Every collection's document URLs, by collection name."""
    with open_store(db_path) as store:
        rows = store.conn.execute(
            "SELECT c.name, d.url FROM documents d JOIN collections c ON c.id = d.collection_id"
        ).fetchall()
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row["name"], []).append(row["url"])
    return found


def list_documents(db_path: Path, collection: str, *, viewer: Viewer = BUILT_IN) -> list[DocumentEntry]:
    with open_store(db_path) as store:
        return _entries(store, _seen(store, collection, viewer).id)


def list_collections(db_path: Path, *, viewer: Viewer = BUILT_IN) -> list[CollectionStats]:
    """The collections `viewer` sees, with their counts, the built-in first."""
    with open_store(db_path) as store:
        return store.stats(viewer)


def find_collection(db_path: Path, name: str, *, viewer: Viewer = BUILT_IN) -> CollectionStats:
    """The collection `name` with its counts, if `viewer` sees it; LibraryError 404 otherwise."""
    with open_store(db_path) as store:
        found = store.stats(viewer, name)  # one query: a delete meanwhile is a 404, never a half answer
    if not found:
        raise LibraryError(f"no collection named {name!r}", 404)
    return found[0]


def _seen(store: CorpusStore, name: str, viewer: Viewer) -> Collection:
    """The collection `name` if `viewer` sees it; LibraryError 404 (the same for one that is not there)."""
    return _visible(store.collection(name), name, viewer)


def _visible(found: Collection | None, name: str, viewer: Viewer) -> Collection:
    if found is None or not sees(viewer, found.owner_id, found.shared):
        raise LibraryError(f"no collection named {name!r}", 404)
    return found


def set_shared(db_path: Path, name: str, shared: bool) -> CollectionStats:
    """Share an uploaded collection with every user (read-only), or make it its owner's alone again.

    Deciding who may is the caller's (an administrator, the server's operator): any collection is
    found by name. LibraryError 404 if there is none, 409 if it has no owner (every user sees it).
    """
    with open_store(db_path) as store, store.transaction():
        found = _seen(store, name, BUILT_IN)
        if found.owner_id is None:
            raise LibraryError(f"collection {name!r} has no owner: every user already sees it", 409)
        store.set_shared(found.id, shared)
        return store.stats(BUILT_IN, name)[0]


def _entries(store: CorpusStore, collection_id: int) -> list[DocumentEntry]:
    rows = store.conn.execute(
        "SELECT doc_key, url, title, path, size FROM documents WHERE collection_id = ? ORDER BY path",
        (collection_id,),
    ).fetchall()
    return [DocumentEntry(r["doc_key"], r["url"], r["title"], r["path"], r["size"]) for r in rows]


def _writable(store: CorpusStore, name: str, viewer: Viewer) -> Collection:
    found = _seen(store, name, viewer)
    if found.kind == "builtin":
        raise LibraryError(f"{name!r} is the built-in reference and cannot be changed", 409)
    _check_changes(found, viewer)
    return found


def _check_changes(found: Collection, viewer: Viewer) -> None:
    """LibraryError 403 when `viewer` sees the collection but may not change it."""
    if changes(viewer, found.owner_id):
        return
    if found.owner_id is None:
        why = "it is shared by every user; only administrators change it"
    else:
        why = "it is another user's, shared read-only"
    raise LibraryError(f"collection {found.name!r} is read-only to you: {why}", 403)


def delete_collection(db_path: Path, name: str, *, viewer: Viewer = BUILT_IN) -> int:
    """Remove a collection; returns how many documents it had."""
    with open_store(db_path) as store, store.transaction():
        # Checked under the write lock: a concurrent delete makes this one a 404, not a crash.
        found = _writable(store, name, viewer)
        count = len(store.documents(found.id))
        store.delete_collection_rows(name)
    return count


def delete_document(db_path: Path, name: str, doc_id: str, *, viewer: Viewer = BUILT_IN) -> None:
    with open_store(db_path) as store:
        found = _writable(store, name, viewer)
        with store.transaction():
            cur = store.conn.execute(
                "DELETE FROM documents WHERE doc_key = ?"
                " AND collection_id = (SELECT id FROM collections WHERE name = ?)",
                (doc_id, name),
            )
            if cur.rowcount == 0:
                raise LibraryError(f"no document {doc_id!r} in collection {name!r}", 404)
            store.refresh_profile(found.id)


def _safe_name(filename: str) -> str:
    """The upload's file name without any folder part (a name is never a path into the server)."""
    name = PurePosixPath(filename.replace("\\", "/")).name.strip()
    if not name or name in (".", "..") or name.startswith("."):
        raise LibraryError(f"file name {filename!r} is not usable", 422)
    return name


@dataclass(frozen=True)
class _Accepted:
    path: str  # the document's path in the collection: the upload's safe name
    title: str
    size: int
    digest: str
    text_file: Path  # the extracted text, on disk until the write


def _save(upload: Upload, dest: Path, limits: UploadLimits) -> tuple[int, str]:
    """Copy the upload to `dest` in bounded reads; its size and SHA-256. LibraryError (413) past the cap."""
    digest = hashlib.sha256()
    size = 0
    with dest.open("wb") as out:
        while chunk := upload.stream.read(_COPY_CHUNK):
            size += len(chunk)
            if size > limits.max_file_bytes:  # the rest is not read: its size is not known
                raise LibraryError(f"larger than the {limits.max_file_bytes / 1_000_000:.1f} MB limit", 413)
            digest.update(chunk)
            out.write(chunk)
    return size, digest.hexdigest()


def _prepare(
    upload: Upload, name: str, index: int, folder: Path, limits: UploadLimits, extract_file: Extractor
) -> _Accepted:
    """Check, save and extract one file (its text goes to a file beside it); LibraryError refuses it."""
    if not is_supported(Path(name)):
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise LibraryError(f"file type not supported (supported: {kinds})", 415)
    cap_mb = limits.max_file_bytes / 1_000_000
    if upload.size is not None and upload.size > limits.max_file_bytes:
        raise LibraryError(f"{upload.size / 1_000_000:.1f} MB is over the {cap_mb:.1f} MB limit", 413)
    saved = folder / str(index)  # never the upload's name: that is only data here
    size, digest = _save(upload, saved, limits)
    text_file = folder / f"{index}.txt"
    try:
        title = extract_file(saved, name, text_file)
    except ExtractError as exc:
        raise LibraryError(str(exc), 422) from None
    finally:
        saved.unlink()
    return _Accepted(name, title, size, digest, text_file)


def add_uploads(
    db_path: Path,
    name: str,
    uploads: list[Upload],
    limits: UploadLimits,
    extract_file: Extractor,
    clock: Clock | None = None,
    *,
    viewer: Viewer = BUILT_IN,
) -> UploadResult:
    """Add files to collection `name` (created as kind `uploaded` if new, owned by `viewer`); each
    file is added or refused.

    LibraryError refuses the whole request; UploadRefused when every file was refused.
    """
    if not is_valid_name(name):
        raise LibraryError(f"invalid collection name {name!r}: use lower-case letters, digits, '.', '_' and '-'")
    if not uploads:
        raise LibraryError("no files in the upload")
    if len(uploads) > limits.max_files:
        raise LibraryError(f"{len(uploads)} files is over the limit of {limits.max_files} per upload", 413)
    names: list[str | LibraryError] = []
    for upload in uploads:
        try:
            names.append(_safe_name(upload.filename))
        except LibraryError as exc:
            names.append(exc)
    usable = [n for n in names if isinstance(n, str)]
    if len(set(usable)) != len(usable):
        raise LibraryError("two files in the upload have the same name", 422)
    with open_store(db_path) as store:
        existed = _uploadable(store, name, viewer) is not None  # refused before any file is read
    accepted: list[_Accepted] = []
    refused: list[Refusal] = []
    sizes = [upload.size for upload in uploads]
    progress = Throughput(len(uploads), None if None in sizes else sum(s or 0 for s in sizes), clock)
    with tempfile.TemporaryDirectory(prefix="sleuth-upload-") as tmp:
        for index, (upload, safe) in enumerate(zip(uploads, names, strict=True)):
            size = upload.size or 0  # a refused file's, as the request said it
            if isinstance(safe, LibraryError):
                refused.append(Refusal(repr(upload.filename), safe.status, str(safe)))
            else:
                try:
                    accepted.append(_prepare(upload, safe, index, Path(tmp), limits, extract_file))
                    size = accepted[-1].size
                except LibraryError as exc:
                    refused.append(Refusal(safe, exc.status, str(exc)))
            progress.advance(size)
            if progress.due(PROGRESS_LOG_S):
                log.info("extracting an upload to %r: %s", name, progress.line())
        log.info("extracted an upload to %r: %s in %.1f s", name, progress.line(), progress.elapsed())
        if not accepted:
            raise UploadRefused(refused)
        added = _write(db_path, name, accepted, existed, viewer)
    return UploadResult(added, refused)


def _uploadable(store: CorpusStore, name: str, viewer: Viewer) -> Collection | None:
    """The collection uploads may go into (None: a new one); LibraryError 409 if it is not for
    uploads, 404 if `viewer` does not see it, 403 if they may not change it."""
    existing = store.collection(name)
    if existing is None:
        return None
    # Not seen is not found: another user's private collection says nothing of itself, though its
    # name (server-wide) cannot be taken.
    existing = _visible(existing, name, viewer)
    if existing.kind != "uploaded":
        what = "the built-in reference" if name == BUILTIN_COLLECTION else f"a folder ({existing.root})"
        raise LibraryError(f"collection {name!r} belongs to {what}; upload into another name", 409)
    _check_changes(existing, viewer)
    return existing


def _write(db_path: Path, name: str, accepted: list[_Accepted], existed: bool, viewer: Viewer) -> list[DocumentEntry]:
    with open_store(db_path) as store, store.transaction():
        # Checked again under the write lock: the collection may have gone (or changed hands)
        # while the files were extracted.
        collection = _uploadable(store, name, viewer)
        if collection is None and existed:
            raise LibraryError(f"collection {name!r} was deleted while the files were read; nothing was added", 409)
        collection = collection or store.upsert_collection(name, "uploaded", None, owner_id=viewer.user_id)
        for item in accepted:
            text = item.text_file.read_text(encoding="utf-8", errors="surrogatepass")
            store.put_document(
                collection,
                item.path,
                title=item.title,
                text=text,
                mtime=None,
                size=item.size,
                digest=item.digest,
                chunks=iter_chunks(text, item.title),
            )
        store.touch_collection(collection.id)
        store.refresh_profile(collection.id)
        entries = {e.path: e for e in _entries(store, collection.id)}
    return [entries[item.path] for item in accepted]
