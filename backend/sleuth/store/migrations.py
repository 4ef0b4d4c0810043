"""Versioned schema. `PRAGMA user_version` holds the number of migrations applied.

Append new migrations to MIGRATIONS; never edit one that has shipped. Each runs in its own
transaction together with the version bump, so a crash mid-migration leaves the old version.
"""

from __future__ import annotations

import sqlite3

from sleuth.store.db import write_transaction

MIGRATIONS: list[str] = [
    # 1: the initial schema. JSON columns hold lists/objects as JSON text so the tables stay
    # readable with the sqlite3 shell.
    """
    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        title       TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    );
    CREATE TABLE messages (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id),
        role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        content     TEXT NOT NULL,
        run_id      TEXT,
        created_at  TEXT NOT NULL
    );
    CREATE INDEX messages_by_session ON messages(session_id);
    CREATE TABLE runs (
        id              TEXT PRIMARY KEY,
        session_id      TEXT NOT NULL REFERENCES sessions(id),
        message_id      TEXT,
        question        TEXT NOT NULL,
        mode            TEXT,
        kind            TEXT NOT NULL CHECK (kind IN ('question', 'clarification_answer')),
        answers_run_id  TEXT,
        status          TEXT NOT NULL,
        stop_reason     TEXT,
        report_id       TEXT,
        error           TEXT,
        clarification_questions TEXT NOT NULL DEFAULT '[]',
        owner_host      TEXT NOT NULL,
        owner_pid       INTEGER NOT NULL,
        created_at      TEXT NOT NULL,
        finished_at     TEXT
    );
    CREATE INDEX runs_by_session ON runs(session_id);
    CREATE INDEX runs_by_status ON runs(status);
    CREATE TABLE packets (
        run_id      TEXT NOT NULL,
        seq         INTEGER NOT NULL,
        type        TEXT NOT NULL,
        created_at  REAL NOT NULL,
        json        TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE reports (
        id              TEXT PRIMARY KEY,
        run_id          TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        status          TEXT NOT NULL,
        stop_reason     TEXT NOT NULL,
        question        TEXT NOT NULL,
        title           TEXT NOT NULL,
        summary         TEXT NOT NULL,
        markdown        TEXT NOT NULL,
        sources         TEXT NOT NULL,
        removed_citations TEXT NOT NULL,
        clarification_questions TEXT NOT NULL,
        plan            TEXT NOT NULL,
        error           TEXT,
        elapsed_s       REAL NOT NULL,
        input_tokens    INTEGER NOT NULL,
        output_tokens   INTEGER NOT NULL,
        cost_usd        REAL NOT NULL,
        created_at      TEXT NOT NULL
    );
    CREATE INDEX reports_by_session ON reports(session_id);
    """,
    # 2: the report as an artifact: key findings and the engine's method note (JSON).
    """
    ALTER TABLE reports ADD COLUMN key_findings TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE reports ADD COLUMN method TEXT NOT NULL DEFAULT 'null';
    """,
    # 3: spoken versions of reports; the audio file lives under the data dir, named by id.
    """
    CREATE TABLE audio (
        id          TEXT PRIMARY KEY,
        report_id   TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        style       TEXT NOT NULL,
        status      TEXT NOT NULL,
        error       TEXT,
        media_type  TEXT,
        duration_s  REAL,
        created_at  TEXT NOT NULL
    );
    CREATE INDEX audio_by_session ON audio(session_id);
    """,
    # 4: who makes a pending audio file, so a restart can end the jobs a dead process left pending.
    """
    ALTER TABLE audio ADD COLUMN owner_host TEXT NOT NULL DEFAULT '';
    ALTER TABLE audio ADD COLUMN owner_pid INTEGER NOT NULL DEFAULT 0;
    """,
]


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Sleuth; refusing to touch it."""


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every pending migration in order; returns the resulting version."""
    current = schema_version(conn)
    if current > len(MIGRATIONS):
        raise SchemaTooNew(f"database schema v{current} is newer than this Sleuth (v{len(MIGRATIONS)})")
    for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
        # The write lock comes first, so two processes starting at once do not both apply the
        # same migration: the second waits, then sees the new version.
        with write_transaction(conn):
            if schema_version(conn) >= version:
                continue
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")
    return schema_version(conn)


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT the open transaction; run statements one by one instead.
    return [part.strip() for part in script.split(";") if part.strip()]
