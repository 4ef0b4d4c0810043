"""Versioned schema: one list of named migrations, one runner, for every backend.

Append new migrations to MIGRATIONS; never edit one that has shipped. Each runs in its own
transaction together with the version bump, so a crash mid-migration leaves the old version.
The backend keeps the version (SQLite: `PRAGMA user_version`; PostgreSQL: a `schema_migrations`
table) and spells the few DDL words that differ: `{REAL}` (a double), `{ROWID}` (the insertion
order SQLite keeps implicitly and PostgreSQL needs a column for), `{WITHOUT_ROWID}`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sleuth.store.database import Database


@dataclass(frozen=True)
class Migration:
    name: str
    sql: str


MIGRATIONS: list[Migration] = [
    # 1: the initial schema. JSON columns hold lists/objects as JSON text so the tables stay
    # readable with the sqlite3 shell.
    Migration(
        "initial",
        """
    CREATE TABLE sessions ({ROWID}
        id          TEXT PRIMARY KEY,
        title       TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    );
    CREATE TABLE messages ({ROWID}
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id),
        role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        content     TEXT NOT NULL,
        run_id      TEXT,
        created_at  TEXT NOT NULL
    );
    CREATE INDEX messages_by_session ON messages(session_id);
    CREATE TABLE runs ({ROWID}
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
        created_at  {REAL} NOT NULL,
        json        TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) {WITHOUT_ROWID};
    CREATE TABLE reports ({ROWID}
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
        elapsed_s       {REAL} NOT NULL,
        input_tokens    INTEGER NOT NULL,
        output_tokens   INTEGER NOT NULL,
        cost_usd        {REAL} NOT NULL,
        created_at      TEXT NOT NULL
    );
    CREATE INDEX reports_by_session ON reports(session_id);
    """,
    ),
    # 2: the report as an artifact: key findings and the engine's method note (JSON).
    Migration(
        "report_artifact",
        """
    ALTER TABLE reports ADD COLUMN key_findings TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE reports ADD COLUMN method TEXT NOT NULL DEFAULT 'null';
    """,
    ),
    # 3: spoken versions of reports; the audio file lives under the data dir, named by id.
    Migration(
        "audio",
        """
    CREATE TABLE audio (
        id          TEXT PRIMARY KEY,
        report_id   TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        style       TEXT NOT NULL,
        status      TEXT NOT NULL,
        error       TEXT,
        media_type  TEXT,
        duration_s  {REAL},
        created_at  TEXT NOT NULL
    );
    CREATE INDEX audio_by_session ON audio(session_id);
    """,
    ),
    # 4: who makes a pending audio file, so a restart can end the jobs a dead process left pending.
    Migration(
        "audio_owner",
        """
    ALTER TABLE audio ADD COLUMN owner_host TEXT NOT NULL DEFAULT '';
    ALTER TABLE audio ADD COLUMN owner_pid INTEGER NOT NULL DEFAULT 0;
    """,
    ),
    # 5: one audio per report and style while it is being made or made (a failed one may be asked
    # again). Earlier duplicates give way to the one kept: a done one before a pending one, then the newest.
    Migration(
        "audio_once",
        """
    UPDATE audio SET status = 'failed', error = 'replaced by another audio of this report and style'
    WHERE status IN ('pending', 'done') AND EXISTS (
        SELECT 1 FROM audio AS kept
        WHERE kept.report_id = audio.report_id AND kept.style = audio.style AND kept.id <> audio.id
          AND kept.status IN ('pending', 'done')
          AND ((kept.status = 'done' AND audio.status = 'pending')
               OR (kept.status = audio.status AND (kept.created_at > audio.created_at
                                                   OR (kept.created_at = audio.created_at AND kept.id > audio.id))))
    );
    CREATE UNIQUE INDEX audio_live ON audio(report_id, style) WHERE status IN ('pending', 'done');
    """,
    ),
    # 6: the text of what a run's tool calls returned (MCP results), so the viewer opens it in the
    # session that read it without calling the tool again.
    Migration(
        "tool_documents",
        """
    CREATE TABLE tool_documents ({ROWID}
        run_id      TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        url         TEXT NOT NULL,
        doc_id      TEXT NOT NULL,
        title       TEXT NOT NULL,
        text        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (run_id, url)
    );
    CREATE INDEX tool_documents_by_session ON tool_documents(session_id, url);
    """,
    ),
    # 7: accounts. A session has an owner, and its runs, reports, audio and tool documents are its
    # owner's through it; NULL is the built-in user of SLEUTH_AUTH=none (the first administrator
    # takes those over). Sign-ins and API keys are kept as hashes of their tokens, never the tokens;
    # times are epoch seconds. The OIDC columns link a user to a provider's (issuer, subject).
    Migration(
        "accounts",
        """
    CREATE TABLE users ({ROWID}
        id              TEXT PRIMARY KEY,
        name            TEXT NOT NULL UNIQUE,
        password_hash   TEXT,
        is_admin        INTEGER NOT NULL DEFAULT 0,
        disabled        INTEGER NOT NULL DEFAULT 0,
        created_at      {REAL} NOT NULL,
        oidc_issuer     TEXT,
        oidc_subject    TEXT,
        email           TEXT
    );
    CREATE UNIQUE INDEX users_by_oidc ON users(oidc_issuer, oidc_subject);
    CREATE TABLE auth_sessions (
        token_hash  TEXT PRIMARY KEY,
        user_id     TEXT NOT NULL REFERENCES users(id),
        created_at  {REAL} NOT NULL,
        expires_at  {REAL} NOT NULL,
        revoked     INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX auth_sessions_by_user ON auth_sessions(user_id);
    CREATE TABLE api_keys ({ROWID}
        id            TEXT PRIMARY KEY,
        user_id       TEXT NOT NULL REFERENCES users(id),
        name          TEXT NOT NULL,
        key_hash      TEXT NOT NULL UNIQUE,
        created_at    {REAL} NOT NULL,
        expires_at    {REAL},
        last_used_at  {REAL}
    );
    CREATE INDEX api_keys_by_user ON api_keys(user_id);
    ALTER TABLE sessions ADD COLUMN owner_id TEXT;
    CREATE INDEX sessions_by_owner ON sessions(owner_id, updated_at);
    """,
    ),
    # 8: schedules: a question asked again on a cron or an interval, each firing an ordinary run in the
    # schedule's own session; a firing row per due time (unique, a second claim of it is a no-op); and
    # beside each report what a later run of its schedule compares with (`snapshot`) and what changed
    # since the one before (`changes`).
    Migration(
        "schedules",
        """
    CREATE TABLE schedules ({ROWID}
        id              TEXT PRIMARY KEY,
        session_id      TEXT NOT NULL,
        question        TEXT NOT NULL,
        cron            TEXT,
        every_s         INTEGER,
        timezone        TEXT NOT NULL,
        sources         TEXT NOT NULL DEFAULT 'null',
        mode            TEXT,
        time_budget_s   {REAL},
        notify          TEXT NOT NULL,
        webhook_url     TEXT,
        webhook_secret  TEXT,
        email           TEXT,
        paused          INTEGER NOT NULL DEFAULT 0,
        next_due_at     TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL
    );
    CREATE INDEX schedules_by_due ON schedules(next_due_at);
    CREATE TABLE schedule_firings ({ROWID}
        id              TEXT PRIMARY KEY,
        schedule_id     TEXT NOT NULL,
        due_at          TEXT NOT NULL,
        fired_at        TEXT NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('fired', 'skipped', 'failed')),
        run_id          TEXT,
        detail          TEXT,
        delivery        TEXT NOT NULL DEFAULT 'none',
        delivery_detail TEXT,
        delivery_attempts INTEGER NOT NULL DEFAULT 0,
        UNIQUE (schedule_id, due_at)
    );
    CREATE INDEX schedule_firings_by_delivery ON schedule_firings(delivery);
    ALTER TABLE reports ADD COLUMN changes TEXT NOT NULL DEFAULT 'null';
    ALTER TABLE reports ADD COLUMN snapshot TEXT NOT NULL DEFAULT 'null';
    """,
    ),
    # 9: every time an administrator read another user's research (the admin routes), who read
    # whose, and what: kept by name as well as id, so the record outlives a renamed or removed user.
    Migration(
        "admin_audit",
        """
    CREATE TABLE admin_audit ({ROWID}
        id          TEXT PRIMARY KEY,
        at          {REAL} NOT NULL,
        admin_id    TEXT NOT NULL,
        admin_name  TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        user_name   TEXT NOT NULL,
        action      TEXT NOT NULL,
        session_id  TEXT
    );
    CREATE INDEX admin_audit_by_time ON admin_audit(at);
    """,
    ),
]


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Sleuth; refusing to touch it."""


def current_version(db: Database) -> int:
    with db.migration_transaction() as tx:
        return db.schema_version(tx)


def migrate(db: Database, upto: int | None = None) -> int:
    """Apply every pending migration in order (up to version `upto`: an older schema, for tests of
    the next migration); returns the resulting version."""
    current = current_version(db)
    if current > len(MIGRATIONS):
        raise SchemaTooNew(
            f"database schema v{current} is newer than this Sleuth (v{len(MIGRATIONS)}): {db.describe()}"
        )
    for version, migration in enumerate(MIGRATIONS[current:upto], start=current + 1):
        with db.migration_transaction() as tx:
            if db.schema_version(tx) >= version:
                continue  # another process applied it while this one waited for the lock
            for statement in _statements(_render(migration.sql, db)):
                tx.execute(statement)
            db.record_migration(tx, version, migration.name)
    return current_version(db)


def _render(script: str, db: Database) -> str:
    for word, spelling in db.ddl_words.items():
        script = script.replace(word, spelling)
    return script


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT the open transaction; run statements one by one instead.
    return [part.strip() for part in script.split(";") if part.strip()]
