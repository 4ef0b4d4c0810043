"""The store: every read and write of sessions, messages, runs, reports and stored packets.

Methods are synchronous and thread-safe; the API calls them through `asyncio.to_thread` so the
event loop never waits on the database. Live packet writes go through `PacketWriter` instead,
which batches them. The database is SQLite under the data dir unless SLEUTH_DATABASE_URL names
a PostgreSQL one; the SQL here is portable and `Database` carries the differences.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sleuth.config import Settings
from sleuth.core.urls import database_target
from sleuth.store.accounts import AccountStore
from sleuth.store.audit import AuditStore
from sleuth.store.backends import open_database
from sleuth.store.database import Database, RowLock, Transaction, like_pattern
from sleuth.store.errors import NotFound, RunInProgress
from sleuth.store.migrations import migrate
from sleuth.store.packet_writer import StoredPacket
from sleuth.store.records import MessageRecord, OwnerScope, PacketRow, RunRecord, RunStatus, SessionRecord, now_iso
from sleuth.store.schedules import ScheduleStore
from sleuth.stream.results import ResearchResult, ToolDocument

REPORT_JSON_FIELDS = (
    "sources",
    "removed_citations",
    "clarification_questions",
    "plan",
    "key_findings",
    "method",
    "changes",
    "snapshot",
)
DEFAULT_POOL_SIZE = 10
_LIVE_AUDIO = "SELECT * FROM audio WHERE report_id = ? AND style = ? AND status IN ('pending', 'done')"


class Store:
    """Opens (and migrates) the database; DatabaseError if it cannot, DatabaseUrlError for a bad URL.

    `owned_by(user_id)` gives the same store as one user sees it: every read and write by id and
    every list filters by the session's owner (runs, reports, audio and tool documents through
    their session), so another user's ids are simply not found. The store itself is unscoped: the
    runs' owner, recovery and the single-user modes see everything; what they create has no owner
    (the built-in user's), unless a session is created for an owner.
    """

    def __init__(self, data_dir: Path, database_url: str | None = None, *, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self.data_dir = Path(data_dir)  # files that live beside the rows (audio) go under it
        self.database: Database = open_database(database_target(database_url, self.data_dir), pool_size=pool_size)
        try:
            migrate(self.database)
        except BaseException:
            self.database.close()
            raise
        self.accounts = AccountStore(self.database)
        self.audit = AuditStore(self.database)
        self.schedules = ScheduleStore(self.database)
        self._scope = OwnerScope()

    def owned_by(self, user_id: str) -> Store:
        """This store as `user_id` sees it (the same database; closing it is the unscoped store's job)."""
        view = copy.copy(self)
        view._scope = OwnerScope(user_id, scoped=True)
        view.schedules = self.schedules.seen_as(view._scope)
        return view

    @property
    def owner(self) -> str | None:
        """Whose sessions this store sees and creates; None: the built-in user's, and sees every one."""
        return self._scope.owner

    def _owned(self, column: str = "session_id") -> tuple[str, tuple[Any, ...]]:
        """SQL (starting with AND) keeping the rows of this store's owner: `column` is a session id."""
        return self._scope.rows(column)

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        url = settings.database_url.get_secret_value() if settings.database_url else None
        return cls(settings.data_dir, url, pool_size=settings.database_pool_size)

    def close(self) -> None:
        self.database.close()

    def _write(self, statements: Iterable[tuple[str, Sequence[Any]]]) -> None:
        with self.database.transaction() as tx:
            for sql, params in statements:
                tx.execute(sql, params)

    def _hold_session(self, tx: Transaction, session_id: str, lock: RowLock) -> bool:
        """Lock the session's row for the rest of `tx`; False if there is none.

        Every write that adds to a session takes `keep` and a session's deletion takes `delete`
        first, so the two never interleave: whichever comes second sees what the first did.
        """
        mine, owner = self._owned("id")
        sql = f"SELECT id FROM sessions WHERE id = ?{mine}{self.database.row_lock(lock)}"
        return tx.fetch_one(sql, (session_id, *owner)) is not None

    # -- sessions and messages --------------------------------------------------------------

    def create_session(self, session_id: str, title: str) -> SessionRecord:
        now = now_iso()
        self._write(
            [
                (
                    "INSERT INTO sessions (id, title, created_at, updated_at, owner_id) VALUES (?, ?, ?, ?, ?)",
                    (session_id, title, now, now, self._scope.owner),
                )
            ]
        )
        return SessionRecord(id=session_id, title=title, created_at=now, updated_at=now)

    def get_session(self, session_id: str) -> SessionRecord | None:
        mine, owner = self._owned("id")
        row = self.database.fetch_one(f"SELECT * FROM sessions WHERE id = ?{mine}", (session_id, *owner))
        return SessionRecord.from_row(row) if row else None

    def session_owner(self, session_id: str) -> str | None:
        """The user whose session this is (None: the built-in user's, or no such session here)."""
        mine, owner = self._owned("id")
        row = self.database.fetch_one(f"SELECT owner_id FROM sessions WHERE id = ?{mine}", (session_id, *owner))
        return None if row is None else row["owner_id"]

    def list_sessions(self, limit: int, offset: int = 0, title_contains: str | None = None) -> list[SessionRecord]:
        """Newest first; `title_contains` keeps sessions whose title has it, ignoring case."""
        mine, params = self._owned("id")
        where = f"WHERE 1 = 1{mine}"
        if title_contains:
            where, params = f"{where} AND {self.database.ilike('title')}", (*params, like_pattern(title_contains))
        rows = self.database.fetch_all(
            f"SELECT * FROM sessions {where} ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [SessionRecord.from_row(row) for row in rows]

    def rename_session(self, session_id: str, title: str) -> SessionRecord | None:
        """The renamed session, read in the same transaction; None if there is none."""
        mine, owner = self._owned("id")
        with self.database.transaction() as tx:
            tx.execute(f"UPDATE sessions SET title = ? WHERE id = ?{mine}", (title, session_id, *owner))
            row = tx.fetch_one(f"SELECT * FROM sessions WHERE id = ?{mine}", (session_id, *owner))
        return SessionRecord.from_row(row) if row else None

    def create_audio(
        self, audio_id: str, report_id: str, session_id: str, style: str, *, owner_host: str, owner_pid: int
    ) -> str:
        """A pending job, unless the report has one pending or done in this style (the unique index `audio_live`
        decides, across servers too); the id of the job there is: `audio_id`, or the one found. NotFound if the
        report (or its session) is gone."""
        with self.database.transaction() as tx:
            report = "SELECT id FROM reports WHERE id = ? AND session_id = ?"
            if not self._hold_session(tx, session_id, "keep") or tx.fetch_one(report, (report_id, session_id)) is None:
                raise NotFound("report", report_id)
            tx.execute(
                "INSERT INTO audio (id, report_id, session_id, style, status, created_at, owner_host, owner_pid)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (audio_id, report_id, session_id, style, "pending", now_iso(), owner_host, owner_pid),
            )
            row = tx.fetch_one(_LIVE_AUDIO, (report_id, style))
        assert row is not None  # inserted, or the row that prevented it
        return str(row["id"])

    def live_audio(self, report_id: str, style: str) -> dict[str, Any] | None:
        """The report's audio in this style that is pending or done, if any."""
        mine, owner = self._owned()
        return self.database.fetch_one(_LIVE_AUDIO + mine, (report_id, style, *owner))

    def pending_audio(self) -> list[dict[str, Any]]:
        rows = self.database.fetch_all("SELECT * FROM audio WHERE status = 'pending' ORDER BY created_at, id")
        return [dict(row) for row in rows]

    def finish_audio(
        self, audio_id: str, *, error: str | None, media_type: str | None = None, duration_s: float | None = None
    ) -> bool:
        """Mark the job done or failed. False if its row is gone (its session was deleted meanwhile):
        then nothing points to the file it made, and its maker removes it."""
        row = f"SELECT id FROM audio WHERE id = ?{self.database.row_lock('delete')}"
        with self.database.transaction() as tx:
            if tx.fetch_one(row, (audio_id,)) is None:
                return False
            tx.execute(
                "UPDATE audio SET status = ?, error = ?, media_type = ?, duration_s = ? WHERE id = ?",
                ("failed" if error else "done", error, media_type, duration_s, audio_id),
            )
        return True

    def get_audio(self, audio_id: str) -> dict[str, Any] | None:
        mine, owner = self._owned()
        return self.database.fetch_one(f"SELECT * FROM audio WHERE id = ?{mine}", (audio_id, *owner))

    def delete_session(self, session_id: str) -> list[str]:
        """Remove the session with everything it owns: runs, their packets, messages, reports, audio, and
        the schedule whose session it is.

        Returns the ids of the audio rows removed (their files are the caller's to remove). NotFound
        if there is no such session; RunInProgress, with nothing removed, while one of its runs is
        `running`: that run would go on writing packets and its outcome for a session that is gone.
        """
        runs = "SELECT id FROM runs WHERE session_id = ?"
        with self.database.transaction() as tx:
            if not self._hold_session(tx, session_id, "delete"):
                raise NotFound("session", session_id)
            if tx.fetch_one("SELECT id FROM runs WHERE session_id = ? AND status = 'running'", (session_id,)):
                raise RunInProgress()
            audio_ids = [row["id"] for row in tx.fetch_all("SELECT id FROM audio WHERE session_id = ?", (session_id,))]
            for sql in (
                # A schedule owns its session: it goes with it (a later firing would have nowhere to run).
                "DELETE FROM schedule_firings WHERE schedule_id IN (SELECT id FROM schedules WHERE session_id = ?)",
                "DELETE FROM schedules WHERE session_id = ?",
                f"DELETE FROM packets WHERE run_id IN ({runs})",
                "DELETE FROM tool_documents WHERE session_id = ?",
                "DELETE FROM audio WHERE session_id = ?",
                "DELETE FROM reports WHERE session_id = ?",
                "DELETE FROM messages WHERE session_id = ?",
                "DELETE FROM runs WHERE session_id = ?",
                "DELETE FROM sessions WHERE id = ?",
            ):
                tx.execute(sql, (session_id,))
        return audio_ids

    def rename_session_if_untitled(self, session_id: str, title: str) -> None:
        self._write([("UPDATE sessions SET title = ? WHERE id = ? AND title = ''", (title, session_id))])

    def list_messages(self, session_id: str) -> list[MessageRecord]:
        mine, owner = self._owned()
        rows = self.database.fetch_all(
            f"SELECT * FROM messages WHERE session_id = ?{mine} ORDER BY rowid", (session_id, *owner)
        )
        return [MessageRecord.from_row(row) for row in rows]

    # -- runs -------------------------------------------------------------------------------

    def create_run(
        self,
        run: RunRecord,
        message: MessageRecord | None = None,
        *,
        new_session_title: str | None = None,
        owner_id: str | None = None,
    ) -> None:
        """Insert the run (the user message that started it, and its new session, `owner_id`'s or this
        store's owner's) in one transaction.

        NotFound if the session is not new and no longer exists (deleted while the message came in).
        """
        statements: list[tuple[str, Sequence[Any]]] = []
        if new_session_title is not None:
            statements.append(
                (
                    "INSERT INTO sessions (id, title, created_at, updated_at, owner_id) VALUES (?, ?, ?, ?, ?)",
                    (run.session_id, new_session_title, run.created_at, run.created_at, owner_id or self._scope.owner),
                )
            )
        if message is not None:
            statements.append(_message_insert(message))
        statements += [
            (
                "INSERT INTO runs (id, session_id, message_id, question, mode, kind, answers_run_id, status,"
                " clarification_questions, owner_host, owner_pid, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, ?, ?)",
                (
                    run.id,
                    run.session_id,
                    run.message_id,
                    run.question,
                    run.mode,
                    run.kind,
                    run.answers_run_id,
                    run.status,
                    run.owner_host,
                    run.owner_pid,
                    run.created_at,
                ),
            ),
            ("UPDATE sessions SET updated_at = ? WHERE id = ?", (run.created_at, run.session_id)),
        ]
        with self.database.transaction() as tx:
            if new_session_title is None and not self._hold_session(tx, run.session_id, "keep"):
                raise NotFound("session", run.session_id)
            for sql, params in statements:
                tx.execute(sql, params)

    def get_run(self, run_id: str) -> RunRecord | None:
        mine, owner = self._owned()
        row = self.database.fetch_one(f"SELECT * FROM runs WHERE id = ?{mine}", (run_id, *owner))
        return RunRecord.from_row(row) if row else None

    def list_runs(self, session_id: str) -> list[RunRecord]:
        mine, owner = self._owned()
        rows = self.database.fetch_all(
            f"SELECT * FROM runs WHERE session_id = ?{mine} ORDER BY rowid", (session_id, *owner)
        )
        return [RunRecord.from_row(row) for row in rows]

    def still_running(self, run_ids: Sequence[str]) -> set[str]:
        """Those of these runs whose status is `running` (one query per 500 ids)."""
        running: set[str] = set()
        for start in range(0, len(run_ids), 500):
            chunk = run_ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            query = f"SELECT id FROM runs WHERE status = 'running' AND id IN ({marks})"
            running.update(row["id"] for row in self.database.fetch_all(query, tuple(chunk)))
        return running

    def running_runs(self) -> list[RunRecord]:
        rows = self.database.fetch_all("SELECT * FROM runs WHERE status = 'running' ORDER BY rowid")
        return [RunRecord.from_row(row) for row in rows]

    def finish_run(
        self,
        run_id: str,
        *,
        status: RunStatus,
        stop_reason: str | None,
        report_id: str | None = None,
        error: str | None = None,
        clarification_questions: list[str] | None = None,
        assistant_message: MessageRecord | None = None,
        result: ResearchResult | None = None,
        session_id: str | None = None,
    ) -> None:
        """Mark a run finished; store its report and the assistant's reply in the same transaction."""
        now = now_iso()
        statements: list[tuple[str, Sequence[Any]]] = [
            (
                "UPDATE runs SET status = ?, stop_reason = ?, report_id = ?, error = ?, clarification_questions = ?,"
                " finished_at = ? WHERE id = ?",
                (status, stop_reason, report_id, error, json.dumps(clarification_questions or []), now, run_id),
            )
        ]
        if result is not None and result.report_id and session_id is not None:
            statements.append(_report_insert(result, run_id=run_id, session_id=session_id, created_at=now))
        if result is not None and session_id is not None:
            statements.extend(_tool_document_insert(run_id, session_id, doc, now) for doc in result.tool_documents)
        if assistant_message is not None:
            statements.append(_message_insert(assistant_message))
        self._write(statements)

    def end_run(
        self,
        run_id: str,
        closing: Callable[[PacketRow | None], tuple[list[StoredPacket], str]],
        *,
        status: RunStatus,
        error: str | None,
        reply: MessageRecord,
    ) -> list[StoredPacket]:
        """End a run its engine will not end, in one transaction; returns the packets appended.

        `closing` gets the run's last stored packet (None if there is none) and returns the packets
        to append after it and the stop reason the run ends with. The run is marked finished with
        `status` and `error`, and `reply` is stored as the assistant's message. A run that is no
        longer `running` was ended by someone else first (another server's reaper, its own engine):
        it is left as it is, and nothing is appended.
        """
        with self.database.transaction() as tx:
            run = tx.fetch_one(f"SELECT status FROM runs WHERE id = ?{self.database.row_lock('delete')}", (run_id,))
            if run is None or run["status"] != "running":
                return []
            last = tx.fetch_one(
                "SELECT seq, type, json FROM packets WHERE run_id = ? ORDER BY seq DESC LIMIT 1", (run_id,)
            )
            appended, stop_reason = closing(
                PacketRow(seq=last["seq"], type=last["type"], json=last["json"]) if last else None
            )
            if appended:
                tx.executemany(
                    "INSERT INTO packets (run_id, seq, type, created_at, json) VALUES (?, ?, ?, ?, ?)",
                    [(p.run_id, p.seq, p.type, p.created_at, p.json) for p in appended],
                )
            tx.execute(
                "UPDATE runs SET status = ?, stop_reason = ?, error = ?, finished_at = ? WHERE id = ?",
                (status, stop_reason, error, now_iso(), run_id),
            )
            tx.execute(*_message_insert(reply))
        return appended

    # -- reports ----------------------------------------------------------------------------

    def get_report(self, report_id: str) -> dict[str, Any] | None:
        mine, owner = self._owned()
        data = self.database.fetch_one(f"SELECT * FROM reports WHERE id = ?{mine}", (report_id, *owner))
        if data is None:
            return None
        for name in REPORT_JSON_FIELDS:
            data[name] = json.loads(data[name])
        data["report_id"] = data.pop("id")
        return data

    def latest_report_id(self, session_id: str) -> str | None:
        mine, owner = self._owned()
        row = self.database.fetch_one(
            f"SELECT id FROM reports WHERE session_id = ? AND status = 'completed'{mine} ORDER BY rowid DESC LIMIT 1",
            (session_id, *owner),
        )
        return str(row["id"]) if row else None

    def recent_reports(self, limit: int) -> list[tuple[str, str, str]]:
        """(report id, title, question) of the latest reports with a text, newest first."""
        mine, owner = self._owned()
        rows = self.database.fetch_all(
            f"SELECT id, title, question FROM reports WHERE markdown != ''{mine} ORDER BY rowid DESC LIMIT ?",
            (*owner, limit),
        )
        return [(row["id"], row["title"], row["question"]) for row in rows]

    def cited_url(self, doc_id: str) -> str | None:
        """The URL of a document some report cited, by its packet id (the newest report first)."""
        mine, owner = self._owned()
        rows = self.database.fetch_all(
            f"SELECT sources FROM reports WHERE {self.database.contains('sources')}{mine} ORDER BY rowid DESC LIMIT 20",
            (f'"{doc_id}"', *owner),
        )
        for row in rows:
            for source in json.loads(row["sources"]):
                if source.get("id") == doc_id and isinstance(source.get("url"), str):
                    return str(source["url"])
        return None

    def waiting_for_answers(self, limit: int) -> list[tuple[str, list[str]]]:
        """(session id, questions) of the latest runs that stopped to ask and still wait, newest first."""
        mine, owner = self._owned()
        rows = self.database.fetch_all(
            f"SELECT session_id, clarification_questions FROM runs WHERE status = 'waiting_for_input'{mine}"
            " ORDER BY created_at DESC LIMIT ?",
            (*owner, limit),
        )
        return [(str(row["session_id"]), list(json.loads(row["clarification_questions"] or "[]"))) for row in rows]

    def keep_tool_document(self, run_id: str, session_id: str, document: ToolDocument) -> None:
        """What a tool returned to a run still going on; its result, stored when it ends, holds it too."""
        self._write([_tool_document_insert(run_id, session_id, document, now_iso())])

    def tool_document(
        self, session_id: str, *, url: str | None = None, doc_id: str | None = None
    ) -> ToolDocument | None:
        """What a tool call returned to one of the session's runs, by URL or packet id (the newest
        read first); None when no run of this session read it."""
        column, key = ("url", url) if url is not None else ("doc_id", doc_id)
        mine, owner = self._owned()
        row = self.database.fetch_one(
            f"SELECT doc_id, url, title, text FROM tool_documents WHERE session_id = ? AND {column} = ?{mine}"
            " ORDER BY rowid DESC LIMIT 1",
            (session_id, key, *owner),
        )
        if row is None:
            return None
        return ToolDocument(id=row["doc_id"], url=row["url"], title=row["title"], text=row["text"])

    def completed_reports(self, session_id: str) -> list[tuple[str, str]]:
        """(question, markdown) of the session's completed reports, oldest first."""
        mine, owner = self._owned()
        rows = self.database.fetch_all(
            "SELECT question, markdown FROM reports"
            f" WHERE session_id = ? AND status = 'completed' AND markdown != ''{mine} ORDER BY rowid",
            (session_id, *owner),
        )
        return [(row["question"], row["markdown"]) for row in rows]

    # -- packets ----------------------------------------------------------------------------

    def packets_after(
        self, run_id: str, after_seq: int, limit: int = 1000, upto_seq: int | None = None
    ) -> list[PacketRow]:
        """Stored packets with seq > after_seq (and <= upto_seq), in order."""
        upper = upto_seq if upto_seq is not None else 2**62
        rows = self.database.fetch_all(
            "SELECT seq, type, json FROM packets WHERE run_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
            (run_id, after_seq, upper, limit),
        )
        return [PacketRow(seq=row["seq"], type=row["type"], json=row["json"]) for row in rows]

    def last_packet(self, run_id: str) -> PacketRow | None:
        row = self.database.fetch_one(
            "SELECT seq, type, json FROM packets WHERE run_id = ? ORDER BY seq DESC LIMIT 1", (run_id,)
        )
        return PacketRow(seq=row["seq"], type=row["type"], json=row["json"]) if row else None

    def last_packet_of(self, run_id: str, types: tuple[str, ...]) -> PacketRow | None:
        """The run's latest stored packet of one of these types."""
        marks = ", ".join("?" * len(types))
        row = self.database.fetch_one(
            f"SELECT seq, type, json FROM packets WHERE run_id = ? AND type IN ({marks}) ORDER BY seq DESC LIMIT 1",
            (run_id, *types),
        )
        return PacketRow(seq=row["seq"], type=row["type"], json=row["json"]) if row else None

    def insert_packets(self, rows: Iterable[tuple[str, int, str, float, str]]) -> None:
        """(run_id, seq, type, created_at, json) rows in one transaction (runs stored by the CLI, benchmarks)."""
        with self.database.transaction() as tx:
            tx.executemany("INSERT INTO packets (run_id, seq, type, created_at, json) VALUES (?, ?, ?, ?, ?)", rows)


def _tool_document_insert(run_id: str, session_id: str, doc: ToolDocument, now: str) -> tuple[str, Sequence[Any]]:
    return (
        "INSERT INTO tool_documents (run_id, session_id, url, doc_id, title, text, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (run_id, session_id, doc.url, doc.id, doc.title, doc.text, now),
    )


def _message_insert(message: MessageRecord) -> tuple[str, Sequence[Any]]:
    return (
        "INSERT INTO messages (id, session_id, role, content, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (message.id, message.session_id, message.role, message.content, message.run_id, message.created_at),
    )


def _report_insert(
    result: ResearchResult, *, run_id: str, session_id: str, created_at: str
) -> tuple[str, Sequence[Any]]:
    data = result.model_dump(mode="json")
    return (
        f"INSERT INTO reports ({', '.join(_REPORT_COLUMNS)}) VALUES ({', '.join('?' * len(_REPORT_COLUMNS))})"
        f" ON CONFLICT (id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _REPORT_COLUMNS[1:])}",
        (
            result.report_id,
            run_id,
            session_id,
            result.status,
            result.stop_reason,
            result.question,
            result.title,
            result.summary,
            result.markdown,
            *(json.dumps(data[name]) for name in REPORT_JSON_FIELDS),
            result.error,
            result.elapsed_s,
            result.input_tokens,
            result.output_tokens,
            result.cost_usd,
            created_at,
        ),
    )


_REPORT_COLUMNS = (
    "id",
    "run_id",
    "session_id",
    "status",
    "stop_reason",
    "question",
    "title",
    "summary",
    "markdown",
    *REPORT_JSON_FIELDS,
    "error",
    "elapsed_s",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "created_at",
)
