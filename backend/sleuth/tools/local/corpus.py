"""The local corpus as one run sees it: which index file, which collections, ready on first use.

Scope (what `local` search covers):
* Sources chosen for the request: exactly those collections.
* Otherwise `SLEUTH_CORPUS=<folder>`: that folder (indexed incrementally, as collection kind `env`).
* Otherwise `SLEUTH_CORPUS=<collection name>`: that collection.
* Otherwise the built-in `python-reference` plus every collection added by `sleuth index` or uploaded,
  routed: a search bound to a question goes to the collections whose profile fits it (routing.py).
Of these, a run searches and opens only the collections its owner sees (access.py): the shared
ones and their own uploads. The built-in reference is always indexed and can always be opened.

A run never re-indexes under the write lock when nothing changed: the built-in reference is checked
by a fingerprint, the SLEUTH_CORPUS folder by a stat walk (at most every `corpus_check_s` per
process, and a run that finds another one already checking uses the index as it is).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sleuth.stream.documents import Document
from sleuth.tools.base import Page, ToolError
from sleuth.tools.local import retrieval
from sleuth.tools.local.access import BUILT_IN, Viewer
from sleuth.tools.local.builtin import sync_builtin
from sleuth.tools.local.folders import index_folder
from sleuth.tools.local.indexer import DEFAULT_MAX_FILE_BYTES
from sleuth.tools.local.query import fts_query
from sleuth.tools.local.routing import Routing, route
from sleuth.tools.local.schema import DB_FILENAME, connect
from sleuth.tools.local.store import CorpusStore
from sleuth.tools.local.urls import parse_corpus_url

log = logging.getLogger(__name__)

SOURCE = "local"
_PAGE_SNIPPET_CHARS = 300


def db_path_for(data_dir: Path) -> Path:
    return Path(data_dir).expanduser() / DB_FILENAME


def unreadable_index(exc: sqlite3.Error) -> str:
    """The one-line message for a corpus index that cannot be read."""
    return f"cannot read the local corpus index: {exc}"


class FolderChecks:
    """When each SLEUTH_CORPUS folder was last checked, shared by every run of a process."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self.now = now
        self._lock = threading.Lock()
        self._checked: dict[tuple[str, str], float] = {}
        self._busy: dict[tuple[str, str], threading.Lock] = {}

    def due(self, key: tuple[str, str], every_s: float) -> bool:
        with self._lock:
            last = self._checked.get(key)
        return last is None or self.now() - last >= every_s

    def busy_lock(self, key: tuple[str, str]) -> threading.Lock:
        with self._lock:
            return self._busy.setdefault(key, threading.Lock())

    def done(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._checked[key] = self.now()


FOLDER_CHECKS = FolderChecks()


class LocalCorpus:
    """Thread-safe; every method opens its own short-lived connection (call them via to_thread)."""

    def __init__(
        self,
        db_path: Path,
        corpus: str | None,
        *,
        collections: tuple[str, ...] | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        check_every_s: float = 0.0,
        checks: FolderChecks = FOLDER_CHECKS,
        viewer: Viewer = BUILT_IN,
    ) -> None:
        self.db_path = db_path
        self.viewer = viewer
        self.corpus = corpus
        self.collections = collections
        self.max_file_bytes = max_file_bytes
        self.check_every_s = check_every_s
        self.checks = checks
        self._lock = threading.Lock()
        self._scope: retrieval.Scope | None = None

    def _connect(self) -> sqlite3.Connection:
        try:
            return connect(self.db_path)
        except sqlite3.Error as exc:
            raise ToolError(f"Local corpus index {self.db_path.name} cannot be opened: {exc}") from exc

    def ensure_ready(self) -> retrieval.Scope:
        """Check the built-in reference and the SLEUTH_CORPUS folder, once per instance (one per run)."""
        with self._lock:
            if self._scope is None:
                conn = self._connect()
                try:
                    self._scope = self._prepare(CorpusStore(conn))
                except sqlite3.Error as exc:
                    raise ToolError(f"Local corpus could not be indexed: {exc}") from exc
                finally:
                    conn.close()
            return self._scope

    def _prepare(self, store: CorpusStore) -> retrieval.Scope:
        sync_builtin(store)
        if self.collections is not None:
            return retrieval.Scope(self.collections, self.viewer)
        if self.corpus is None:
            return retrieval.Scope(None, self.viewer)
        folder = Path(self.corpus).expanduser()
        if folder.is_dir():
            return retrieval.Scope((self._check_folder(store, folder),), self.viewer)
        if store.collection(self.corpus) is not None:
            return retrieval.Scope((self.corpus,), self.viewer)
        raise ToolError(f"SLEUTH_CORPUS={self.corpus!r} is neither a folder nor the name of an indexed collection.")

    def _check_folder(self, store: CorpusStore, folder: Path) -> str:
        root = str(folder.resolve())
        key = (str(self.db_path), root)
        existing = store.collection_by_root(root)
        if existing is not None and not self.checks.due(key, self.check_every_s):
            return existing.name
        busy = self.checks.busy_lock(key)
        # Another run is checking this folder: use the index as it is rather than wait.
        if not busy.acquire(blocking=existing is None):
            return existing.name if existing is not None else ""
        try:
            report = index_folder(store, folder, name=None, kind="env", max_bytes=self.max_file_bytes)
        finally:
            busy.release()
        self.checks.done(key)
        for path, reason in [*report.errors, *report.skipped]:
            log.warning("SLEUTH_CORPUS: %s not indexed: %s", path, reason)
        return report.collection

    @property
    def routes(self) -> bool:
        """Whether searches are routed: no collections were chosen and SLEUTH_CORPUS names none."""
        return self.collections is None and self.corpus is None

    def route(self, text: str) -> Routing | None:
        """Which collections fit `text` (None when the scope is fixed); reads profiles, indexes nothing."""
        if not self.routes:
            return None
        conn = self._connect()
        try:
            return route(conn, text, self._candidates(conn))
        except sqlite3.Error as exc:
            raise ToolError(f"Local search failed: {exc}") from exc
        finally:
            conn.close()

    def search(self, query: str, limit: int, *, question: str | None = None) -> list[Document]:
        """The best documents for `query`; with a `question`, in the collections that fit both."""
        scope = self.ensure_ready()
        match = fts_query(query)
        if match is None or limit <= 0:
            return []
        conn = self._connect()
        try:
            routing = route(conn, f"{question}\n{query}", self._candidates(conn)) if question and self.routes else None
            if routing is not None and routing.dropped:
                hits = retrieval.search(conn, match, retrieval.Scope(routing.searched, self.viewer), limit)
                # Never nothing when something matches: the collections that fit had no passage.
                hits = hits or retrieval.search(conn, match, retrieval.Scope(routing.dropped, self.viewer), limit)
            else:
                hits = retrieval.search(conn, match, scope, limit)
        except sqlite3.Error as exc:
            raise ToolError(f"Local search failed: {exc}") from exc
        finally:
            conn.close()
        return [
            Document.from_url(
                hit.url,
                title=hit.title,
                # The section heading tells a reader what the passage is about when the title does not.
                snippet=hit.snippet if hit.heading == hit.title else f"{hit.heading}: {hit.snippet}",
                source=SOURCE,
            )
            for hit in hits
        ]

    def _candidates(self, conn: sqlite3.Connection) -> list[str]:
        return [name for name, kind in CorpusStore(conn).kinds(self.viewer).items() if kind != "env"]

    def read(self, url: str) -> Page:
        try:
            collection, path = parse_corpus_url(url)
        except ValueError as exc:
            raise ToolError(f"Not a local corpus document URL: {url!r}.") from exc
        try:
            self.ensure_ready()
        except ToolError:
            # A bad SLEUTH_CORPUS is reported by search; documents already indexed stay openable.
            pass
        conn = self._connect()
        try:
            found = retrieval.document(conn, collection, path, self.viewer)
            known_collection = found is not None or retrieval.has_collection(conn, collection, self.viewer)
        except sqlite3.Error as exc:
            raise ToolError(f"Local corpus read failed: {exc}") from exc
        finally:
            conn.close()
        if found is None:
            if not known_collection:
                raise ToolError(f"No local corpus collection named {collection!r} (URL {url!r}).")
            raise ToolError(f"No document {path!r} in local corpus collection {collection!r}.")
        snippet = " ".join(found.text[:_PAGE_SNIPPET_CHARS].split())
        return Page(Document.from_url(found.url, title=found.title, snippet=snippet, source=SOURCE), found.text)
