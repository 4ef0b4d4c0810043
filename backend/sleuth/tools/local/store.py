"""Write side of the index: collections, documents and their chunks (one connection, explicit transactions)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sleuth.core.sqlite import write_transaction
from sleuth.stream.documents import document_id
from sleuth.tools.local.access import Viewer, visible_sql
from sleuth.tools.local.chunking import Chunk
from sleuth.tools.local.extract import EXTRACTION_VERSION
from sleuth.tools.local.profile import build_profile, has_profile
from sleuth.tools.local.urls import corpus_url


@dataclass(frozen=True)
class Collection:
    id: int
    name: str
    kind: str  # 'builtin' | 'indexed' | 'env' | 'uploaded'
    root: str | None
    owner_id: str | None = None  # the uploading user (accounts); None: shared by every user
    shared: bool = False  # an owned collection an administrator shared with every user


@dataclass(frozen=True)
class CollectionStats:
    name: str
    kind: str
    root: str | None
    documents: int
    chunks: int
    updated_at: float
    owner_id: str | None = None
    shared: bool = False


@dataclass(frozen=True)
class StoredDocument:
    id: int
    path: str
    mtime: float | None
    size: int
    hash: str
    extraction: int  # the EXTRACTION_VERSION its text was made with


def _collection(row: sqlite3.Row | None) -> Collection | None:
    if row is None:
        return None
    return Collection(row["id"], row["name"], row["kind"], row["root"], row["owner_id"], bool(row["shared"]))


class CorpusStore:
    """Every statement that changes the index lives here."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with write_transaction(self.conn):
            yield

    # Collections

    def collection(self, name: str) -> Collection | None:
        return _collection(self.conn.execute("SELECT * FROM collections WHERE name = ?", (name,)).fetchone())

    def collection_by_root(self, root: str) -> Collection | None:
        return _collection(self.conn.execute("SELECT * FROM collections WHERE root = ?", (root,)).fetchone())

    def upsert_collection(self, name: str, kind: str, root: str | None, *, owner_id: str | None = None) -> Collection:
        """Add a collection, or change an existing one's kind and root (its owner is set only when it is new)."""
        now = time.time()
        self.conn.execute(
            "INSERT INTO collections (name, kind, root, created_at, updated_at, owner_id) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, root = excluded.root,"
            " updated_at = excluded.updated_at"
            " WHERE kind IS NOT excluded.kind OR root IS NOT excluded.root",
            (name, kind, root, now, now, owner_id),
        )
        found = self.collection(name)
        assert found is not None
        return found

    def set_shared(self, collection_id: int, shared: bool) -> None:
        self.conn.execute("UPDATE collections SET shared = ? WHERE id = ?", (int(shared), collection_id))

    def touch_collection(self, collection_id: int) -> None:
        self.conn.execute("UPDATE collections SET updated_at = ? WHERE id = ?", (time.time(), collection_id))

    def refresh_profile(self, collection_id: int) -> None:
        """Rebuild the collection's profile (call inside a transaction)."""
        build_profile(self.conn, collection_id)

    def has_profile(self, collection_id: int) -> bool:
        return has_profile(self.conn, collection_id)

    def remove_collection(self, name: str) -> bool:
        with self.transaction():
            return self.delete_collection_rows(name)

    def delete_collection_rows(self, name: str) -> bool:
        """Delete a collection, its documents and chunks (call inside a transaction)."""
        # Deleting chunks first (rather than by cascade) keeps the FTS delete trigger's work explicit.
        self.conn.execute(
            "DELETE FROM chunks WHERE document_id IN (SELECT d.id FROM documents d JOIN collections c"
            " ON c.id = d.collection_id WHERE c.name = ?)",
            (name,),
        )
        cur = self.conn.execute("DELETE FROM collections WHERE name = ?", (name,))
        return cur.rowcount > 0

    def vacuum(self) -> int:
        """Give the pages freed by deletions back to the file system; returns the bytes reclaimed."""
        before = self._file_bytes()
        self.conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return max(0, before - self._file_bytes())

    def _file_bytes(self) -> int:
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        size = self.conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(size)

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM corpus_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO corpus_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def kinds(self, viewer: Viewer) -> dict[str, str]:
        """Collection name -> kind of those `viewer` sees, the built-in first: cheap (no counting), for every run."""
        seen, params = visible_sql(viewer)
        rows = self.conn.execute(
            f"SELECT c.name, c.kind FROM collections c WHERE 1 = 1{seen} ORDER BY c.kind = 'builtin' DESC, c.name",
            params,
        ).fetchall()
        return {r["name"]: r["kind"] for r in rows}

    def stats(self, viewer: Viewer, name: str | None = None) -> list[CollectionStats]:
        """The collections `viewer` sees (only `name`, if given), with their counts."""
        seen, params = visible_sql(viewer)
        if name is not None:
            seen, params = f"{seen} AND c.name = ?", (*params, name)
        rows = self.conn.execute(
            "SELECT c.name, c.kind, c.root, c.updated_at, c.owner_id, c.shared,"
            " (SELECT COUNT(*) FROM documents d WHERE d.collection_id = c.id) AS documents,"
            " (SELECT COUNT(*) FROM chunks ch JOIN documents d ON d.id = ch.document_id"
            "  WHERE d.collection_id = c.id) AS chunks"
            f" FROM collections c WHERE 1 = 1{seen} ORDER BY c.kind = 'builtin' DESC, c.name",
            params,
        ).fetchall()
        return [
            CollectionStats(
                r["name"],
                r["kind"],
                r["root"],
                r["documents"],
                r["chunks"],
                r["updated_at"],
                r["owner_id"],
                bool(r["shared"]),
            )
            for r in rows
        ]

    # Documents

    def documents(self, collection_id: int) -> dict[str, StoredDocument]:
        rows = self.conn.execute(
            "SELECT id, path, mtime, size, hash, extraction FROM documents WHERE collection_id = ?", (collection_id,)
        ).fetchall()
        return {
            r["path"]: StoredDocument(r["id"], r["path"], r["mtime"], r["size"], r["hash"], r["extraction"])
            for r in rows
        }

    def put_document(
        self,
        collection: Collection,
        path: str,
        *,
        title: str,
        text: str,
        mtime: float | None,
        size: int,
        digest: str,
        chunks: Iterable[Chunk],
    ) -> None:
        """Insert or replace one document and all its chunks (call inside a transaction)."""
        self.conn.execute("DELETE FROM documents WHERE collection_id = ? AND path = ?", (collection.id, path))
        url = corpus_url(collection.name, path)
        cur = self.conn.execute(
            "INSERT INTO documents"
            " (collection_id, path, url, doc_key, title, mtime, size, hash, extraction, text, indexed_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                collection.id,
                path,
                url,
                document_id(url),
                title,
                mtime,
                size,
                digest,
                EXTRACTION_VERSION,
                text,
                time.time(),
            ),
        )
        doc_id = cur.lastrowid
        # A generator, not a list: a huge document's chunks are written as they are cut.
        self.conn.executemany(
            "INSERT INTO chunks (document_id, seq, title, heading, body) VALUES (?, ?, ?, ?, ?)",
            ((doc_id, seq, title, chunk.heading, chunk.body) for seq, chunk in enumerate(chunks)),
        )

    def touch_document(self, doc_id: int, *, mtime: float | None, size: int) -> None:
        """Same content, new stat (e.g. a `touch`): remember it so the next run skips the read."""
        self.conn.execute("UPDATE documents SET mtime = ?, size = ? WHERE id = ?", (mtime, size, doc_id))

    def delete_document(self, doc_id: int) -> None:
        self.conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
