"""Read side of the index: ranked search (best chunk per document) and whole-document lookup."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

# Plain-text highlight markers: snippets go to models and into a browser, so no HTML.
HIGHLIGHT_OPEN = "«"
HIGHLIGHT_CLOSE = "»"
ELLIPSIS = "…"
SNIPPET_TOKENS = 40  # FTS5 allows at most 64

# bm25 column weights (title, heading, body): a term in the title or heading says more about
# what a passage is about than the same term in running text.
_WEIGHTS = "4.0, 2.0, 1.0"


@dataclass(frozen=True)
class Scope:
    """Which collections a search covers: exactly these by name, or (None) every one but `env` folders."""

    names: tuple[str, ...] | None


@dataclass(frozen=True)
class Hit:
    url: str
    title: str
    heading: str
    snippet: str
    score: float  # bm25: lower is better


@dataclass(frozen=True)
class StoredText:
    url: str
    title: str
    text: str


def search(conn: sqlite3.Connection, match: str, scope: Scope, limit: int) -> list[Hit]:
    """The best-scoring chunk of each of the top `limit` documents, best first."""
    params: tuple[str, ...] = ()
    if scope.names is None:
        where = "c.kind != 'env'"
    else:
        where, params = f"c.name IN ({','.join('?' * len(scope.names)) or 'NULL'})", scope.names
    best = conn.execute(
        f"""
        WITH hits AS (
            SELECT rowid AS chunk_id, bm25(chunks_fts, {_WEIGHTS}) AS score
            FROM chunks_fts WHERE chunks_fts MATCH ?
        ), ranked AS (
            SELECT h.chunk_id, h.score,
                   ROW_NUMBER() OVER (PARTITION BY ch.document_id ORDER BY h.score, ch.seq) AS place
            FROM hits h
            JOIN chunks ch ON ch.id = h.chunk_id
            JOIN documents d ON d.id = ch.document_id
            JOIN collections c ON c.id = d.collection_id
            WHERE {where}
        )
        SELECT chunk_id, score FROM ranked WHERE place = 1 ORDER BY score, chunk_id LIMIT ?
        """,
        (match, *params, limit),
    ).fetchall()
    if not best:
        return []
    order = {row["chunk_id"]: (rank, row["score"]) for rank, row in enumerate(best)}
    # Snippets only for the winners: snippet() re-tokenises text, too costly for every match. CROSS
    # JOIN keeps the full-text table first: left to the planner, it walks every chunk and asks the
    # full-text index about each one.
    rows = conn.execute(
        f"""
        SELECT chunks_fts.rowid AS chunk_id, d.url, d.title, ch.heading,
               snippet(chunks_fts, 2, ?, ?, ?, {SNIPPET_TOKENS}) AS snippet
        FROM chunks_fts
        CROSS JOIN chunks ch ON ch.id = chunks_fts.rowid
        CROSS JOIN documents d ON d.id = ch.document_id
        WHERE chunks_fts MATCH ? AND chunks_fts.rowid IN ({",".join("?" * len(order))})
        """,
        (HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE, ELLIPSIS, match, *order),
    ).fetchall()
    hits = [
        Hit(row["url"], row["title"], row["heading"], " ".join(row["snippet"].split()), order[row["chunk_id"]][1])
        for row in rows
    ]
    return sorted(hits, key=lambda hit: hit.score)


def document(conn: sqlite3.Connection, collection: str, path: str) -> StoredText | None:
    row = conn.execute(
        "SELECT d.url, d.title, d.text FROM documents d JOIN collections c ON c.id = d.collection_id"
        " WHERE c.name = ? AND d.path = ?",
        (collection, path),
    ).fetchone()
    return None if row is None else StoredText(row["url"], row["title"], row["text"])


def has_collection(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM collections WHERE name = ?", (name,)).fetchone() is not None
