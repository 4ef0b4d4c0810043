"""The on-disk layout of the corpus index and how to open it.

Readable with the sqlite3 shell, e.g.
`sqlite3 ~/.sleuth/corpus.db "select name, kind, root from collections"`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sleuth.core.sqlite import write_transaction
from sleuth.stream.documents import document_id
from sleuth.tools.local.profile import build_missing, build_profiles

SCHEMA_VERSION = 6
DB_FILENAME = "corpus.db"

_DDL = """
CREATE TABLE IF NOT EXISTS collections (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,       -- host part of corpus:// URLs
    kind        TEXT NOT NULL,              -- 'builtin' | 'indexed' (sleuth index) | 'env' (SLEUTH_CORPUS) | 'uploaded'
    root        TEXT,                       -- absolute folder path; NULL for the built-in reference
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    owner_id    TEXT,                       -- the user who uploaded it (accounts); NULL: no owner, shared by every user
    shared      INTEGER NOT NULL DEFAULT 0  -- 1: an administrator shared the owned collection with every user
);

CREATE TABLE IF NOT EXISTS documents (
    id            INTEGER PRIMARY KEY,
    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    path          TEXT NOT NULL,            -- relative to the collection root, '/' separators
    url           TEXT NOT NULL UNIQUE,     -- corpus://<collection>/<path>
    doc_key       TEXT,                     -- the id packets give this document (sleuth.stream.documents.document_id)
    title         TEXT NOT NULL,
    mtime         REAL,                     -- file mtime when indexed (NULL for built-in topics)
    size          INTEGER NOT NULL,         -- bytes of the source
    hash          TEXT NOT NULL,            -- sha256 of the source bytes
    extraction    INTEGER NOT NULL DEFAULT 0, -- EXTRACTION_VERSION that made `text` (0: before versions)
    text          TEXT NOT NULL,            -- full extracted text, returned by open_url
    indexed_at    REAL NOT NULL,
    UNIQUE (collection_id, path)
);

CREATE TABLE IF NOT EXISTS chunks (
    id          INTEGER PRIMARY KEY,
    document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,           -- position within the document
    title       TEXT NOT NULL,              -- the document title, repeated so every chunk matches on it
    heading     TEXT NOT NULL,              -- nearest heading above the chunk
    body        TEXT NOT NULL,
    UNIQUE (document_id, seq)
);

-- External-content FTS5: the text lives once, in `chunks`; triggers keep the index in step.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title, heading, body,
    content = 'chunks', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, title, heading, body) VALUES (new.id, new.title, new.heading, new.body);
END;

CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, body)
    VALUES ('delete', old.id, old.title, old.heading, old.body);
END;

CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks (document_id);

-- Small facts about the index, e.g. which CPython the built-in reference was taken from.
CREATE TABLE IF NOT EXISTS corpus_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

# Version 3: what each collection is about, so a search can go to the collections that fit its
# question (tools/local/profile.py builds both tables, tools/local/routing.py reads them).
_PROFILES_DDL = """
CREATE TABLE IF NOT EXISTS collection_profiles (
    collection_id INTEGER PRIMARY KEY REFERENCES collections(id) ON DELETE CASCADE,
    title         TEXT NOT NULL,            -- what the collection is, in a few words
    kind          TEXT NOT NULL,            -- the collection's kind when the profile was built
    documents     INTEGER NOT NULL,
    chunks        INTEGER NOT NULL,
    terms         TEXT NOT NULL,            -- JSON list: its most characteristic terms, most first
    headings      TEXT NOT NULL,            -- JSON list: a few sample headings (titles of its biggest documents)
    built_at      REAL NOT NULL
);

-- Per collection and stemmed term (core/words.py `stem`): in how many of its chunks the term occurs.
CREATE TABLE IF NOT EXISTS collection_terms (
    term          TEXT NOT NULL,
    collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    chunks        INTEGER NOT NULL,
    word          TEXT NOT NULL,            -- a word of the collection with this stem, to show
    PRIMARY KEY (term, collection_id)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS collection_terms_by_collection ON collection_terms (collection_id);
"""


def connect(db_path: Path) -> sqlite3.Connection:
    """A new connection (one per thread / short task), schema created on first open.

    Autocommit mode: writers open `write_transaction` themselves, so transactions are explicit.
    """
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, isolation_level=None, timeout=30.0)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version < SCHEMA_VERSION:
        # WAL lets searches read while an index run writes (server + `sleuth index` at once).
        conn.execute("PRAGMA journal_mode = WAL")
        with write_transaction(conn):
            # Another process may have upgraded while this one waited for the lock.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 1:
                _upgrade_from_1(conn)
            if 1 <= version < 4:
                _add_owners(conn)
            if 1 <= version < 5:
                _add_extraction(conn)
            for statement in _statements(_DDL):
                conn.execute(statement)
            if version < 3:
                _add_profiles(conn)
            elif version < 6:
                _restem_profiles(conn)
            conn.execute("CREATE INDEX IF NOT EXISTS documents_by_key ON documents (doc_key)")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return conn


def _statements(script: str) -> list[str]:
    """The DDL's statements, so they run inside the caller's transaction (executescript would commit)."""
    statements: list[str] = []
    current = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    return statements


def _upgrade_from_1(conn: sqlite3.Connection) -> None:
    """Version 2 adds `documents.doc_key`; fill it for documents indexed before."""
    conn.execute("ALTER TABLE documents ADD COLUMN doc_key TEXT")
    rows = conn.execute("SELECT id, url FROM documents").fetchall()
    conn.executemany("UPDATE documents SET doc_key = ? WHERE id = ?", [(document_id(r["url"]), r["id"]) for r in rows])


def _add_extraction(conn: sqlite3.Connection) -> None:
    """Version 5 records which extraction rules made each document's text; those indexed before
    are version 0, so the next index run of their folder extracts them again."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
    if "extraction" not in columns:
        conn.execute("ALTER TABLE documents ADD COLUMN extraction INTEGER NOT NULL DEFAULT 0")


def _add_owners(conn: sqlite3.Connection) -> None:
    """Version 4 gives collections an owner (tools/local/access.py). Every collection indexed before
    keeps none, so it stays shared by every user as it was: uploads too, which with accounts only
    administrators could make, for everyone."""
    columns = {row["name"] for row in conn.execute("PRAGMA table_info(collections)")}
    if "owner_id" not in columns:
        conn.execute("ALTER TABLE collections ADD COLUMN owner_id TEXT")
    if "shared" not in columns:
        conn.execute("ALTER TABLE collections ADD COLUMN shared INTEGER NOT NULL DEFAULT 0")


def _restem_profiles(conn: sqlite3.Connection) -> None:
    """Version 6 stems nouns in -tion and -sion as their verbs ("deletion" meets "delete"): every
    profile's term counts are rebuilt with that stemming, so that routing keeps matching a question's
    terms against them."""
    build_profiles(conn, [int(row[0]) for row in conn.execute("SELECT id FROM collections").fetchall()])


def _add_profiles(conn: sqlite3.Connection) -> None:
    """Version 3 adds collection profiles, built here for the collections indexed before."""
    for statement in _statements(_PROFILES_DDL):
        conn.execute(statement)
    build_missing(conn)
