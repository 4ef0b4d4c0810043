"""Read side of the index: ranked search (best chunk per document) and whole-document lookup."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from sleuth.tools.local.access import Viewer, sees, visible_sql

# Plain-text highlight markers: snippets go to models and into a browser, so no HTML.
HIGHLIGHT_OPEN = "«"
HIGHLIGHT_CLOSE = "»"
ELLIPSIS = "…"
SNIPPET_TOKENS = 40  # FTS5 allows at most 64

# bm25 column weights (title, heading, body): a term in the title or heading says more about
# what a passage is about than the same term in running text.
BM25_WEIGHTS = "4.0, 2.0, 1.0"

# How many of the best chunks are read first, per document asked for. A search keeps the best chunk
# of each document, so it needs more chunks than documents; it reads deeper only when the best ones
# fall in too few documents (or out of scope), and past the last depth ranks every match.
_DEPTHS = (8, 64)


@dataclass(frozen=True)
class Scope:
    """Which collections a search covers: exactly these by name, or (None) every one but `env` folders;
    of them, only those `viewer` sees (tools/local/access.py), whatever the names say."""

    names: tuple[str, ...] | None
    viewer: Viewer


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
    """The best-scoring chunk of each of the top `limit` documents, best first. Documents with the same
    content (a page shipped under two names) count once: the copy would take a place of its own."""
    best = _best_chunks(conn, match, scope, limit)
    if not best:
        return []
    order = {chunk_id: (rank, score) for rank, (chunk_id, score) in enumerate(best)}
    # Snippets only for the winners: snippet() re-tokenises text, too costly for every match. The
    # winners' ids come first (CROSS JOIN keeps the order), so the full-text table is asked for one
    # row at a time; given the ids as a constraint, or left to the planner, it reads every match.
    rows = conn.execute(
        f"""
        SELECT chunks_fts.rowid AS chunk_id, d.url, d.title, ch.heading,
               snippet(chunks_fts, 2, ?, ?, ?, {SNIPPET_TOKENS}) AS snippet
        FROM (VALUES {",".join(["(?)"] * len(order))}) winners
        CROSS JOIN chunks_fts ON chunks_fts.rowid = winners.column1
        CROSS JOIN chunks ch ON ch.id = chunks_fts.rowid
        CROSS JOIN documents d ON d.id = ch.document_id
        WHERE chunks_fts MATCH ?
        """,
        (HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE, ELLIPSIS, *order, match),
    ).fetchall()
    return [
        Hit(row["url"], row["title"], row["heading"], " ".join(row["snippet"].split()), order[row["chunk_id"]][1])
        for row in sorted(rows, key=lambda row: order[row["chunk_id"]][0])
    ]


def _best_chunks(conn: sqlite3.Connection, match: str, scope: Scope, limit: int) -> list[tuple[int, float]]:
    """(chunk id, score) of the best chunk of each of the top `limit` documents in `scope`, best first.

    Ranking every match costs as much as there are matches, and a question's common words match
    most of a big index; the best chunks alone are a top-N that SQLite keeps without sorting the
    rest. Their first chunk per document, in rank order, is each document's best chunk, so reading
    a prefix of the ranking gives the same answer as ranking everything, once it holds `limit`
    documents in scope or every match.
    """
    for per_document in _DEPTHS:
        depth = limit * per_document
        top = conn.execute(
            f"""
            SELECT t.chunk_id, t.score, d.hash, c.name, c.kind, c.owner_id, c.shared
            FROM (
                SELECT rowid AS chunk_id, bm25(chunks_fts, {BM25_WEIGHTS}) AS score
                FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score, rowid LIMIT ?
            ) t
            CROSS JOIN chunks ch ON ch.id = t.chunk_id
            CROSS JOIN documents d ON d.id = ch.document_id
            CROSS JOIN collections c ON c.id = d.collection_id
            ORDER BY t.score, t.chunk_id
            """,
            (match, depth),
        ).fetchall()
        best: dict[str, tuple[int, float]] = {}
        for row in top:
            if _in_scope(scope, row):
                best.setdefault(row["hash"], (row["chunk_id"], row["score"]))
        if len(best) >= limit or len(top) < depth:
            return list(best.values())[:limit]
    return _rank_every_match(conn, match, scope, limit)


def _in_scope(scope: Scope, row: sqlite3.Row) -> bool:
    if not sees(scope.viewer, row["owner_id"], bool(row["shared"])):
        return False
    return row["kind"] != "env" if scope.names is None else row["name"] in scope.names


def _rank_every_match(conn: sqlite3.Connection, match: str, scope: Scope, limit: int) -> list[tuple[int, float]]:
    """`_best_chunks` for a scope that holds few of the best chunks: every match ranked, grouped by content."""
    params: tuple[str, ...] = ()
    if scope.names is None:
        where = "c.kind != 'env'"
    else:
        where, params = f"c.name IN ({','.join('?' * len(scope.names)) or 'NULL'})", scope.names
    seen, seen_params = visible_sql(scope.viewer)
    where, params = where + seen, (*params, *seen_params)
    rows = conn.execute(
        f"""
        WITH hits AS (
            SELECT rowid AS chunk_id, bm25(chunks_fts, {BM25_WEIGHTS}) AS score
            FROM chunks_fts WHERE chunks_fts MATCH ?
        ), ranked AS (
            SELECT h.chunk_id, h.score,
                   ROW_NUMBER() OVER (PARTITION BY d.hash ORDER BY h.score, h.chunk_id) AS place
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
    return [(row["chunk_id"], row["score"]) for row in rows]


def document(conn: sqlite3.Connection, collection: str, path: str, viewer: Viewer) -> StoredText | None:
    seen, params = visible_sql(viewer)
    row = conn.execute(
        "SELECT d.url, d.title, d.text FROM documents d JOIN collections c ON c.id = d.collection_id"
        f" WHERE c.name = ? AND d.path = ?{seen}",
        (collection, path, *params),
    ).fetchone()
    return None if row is None else StoredText(row["url"], row["title"], row["text"])


def has_collection(conn: sqlite3.Connection, name: str, viewer: Viewer) -> bool:
    seen, params = visible_sql(viewer)
    return conn.execute(f"SELECT 1 FROM collections c WHERE c.name = ?{seen}", (name, *params)).fetchone() is not None
