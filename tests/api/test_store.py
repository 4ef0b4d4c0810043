"""The store on its own: versioned migrations, batched durable packet writes, crash recovery.

Run against SQLite, and against PostgreSQL when SLEUTH_TEST_DATABASE_URL is set (scripts/test
does both): `open_store` opens whichever the test's settings name."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.store.database import Database
from sleuth.store.migrations import MIGRATIONS, SchemaTooNew, current_version, migrate
from sleuth.store.packet_writer import PacketWriter, StoredPacket
from sleuth.store.records import RunRecord, now_iso
from sleuth.store.recovery import RESTART_MESSAGE, end_run_as_interrupted, recover_orphaned_runs, this_host
from sleuth.store.store import Store
from sleuth.stream.packets import parse_packet
from sleuth.stream.results import ResearchResult, ToolDocument
from support.databases import table_columns
from support.invariants import check_stored
from support.reports import store_report


def open_store() -> Store:
    return Store.from_settings(Settings())


@pytest.fixture
def store() -> Iterator[Store]:
    opened = open_store()
    try:
        yield opened
    finally:
        opened.close()


def test_schema_is_created_versioned_and_refuses_a_newer_one(store: Store) -> None:
    database = store.database
    assert current_version(database) == len(MIGRATIONS)
    assert {"sessions", "messages", "runs", "packets", "reports", "audio"} <= set(table_columns(database))
    assert migrate(database) == len(MIGRATIONS)  # idempotent
    with database.migration_transaction() as tx:
        database.record_migration(tx, len(MIGRATIONS) + 1, "from_the_future")
    with pytest.raises(SchemaTooNew):
        open_store()


def test_sqlite_is_in_wal_mode_and_versioned_by_user_version(tmp_path: Path) -> None:
    store = Store(tmp_path)  # no URL: the embedded default, whatever the test run's database
    conn = sqlite3.connect(tmp_path / "sleuth.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_both_backends_commit_with_the_same_durability(store: Store) -> None:
    """Visible to every reader and safe from a crash of Sleuth at commit; not waiting for a disk
    sync per packet batch (SQLite: WAL + synchronous=NORMAL; PostgreSQL: synchronous_commit=off)."""
    database = store.database
    if database.backend == "sqlite":
        assert database.fetch_one("PRAGMA journal_mode") == {"journal_mode": "wal"}
        assert database.fetch_one("PRAGMA synchronous") == {"synchronous": 1}  # NORMAL
    else:
        assert database.fetch_one("SHOW synchronous_commit") == {"synchronous_commit": "off"}


def test_two_stores_opening_one_database_at_once_migrate_it_once() -> None:
    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: open_store(), range(4)))
    try:
        assert all(current_version(s.database) == len(MIGRATIONS) for s in stores)
    finally:
        for opened in stores:
            opened.close()


def test_text_with_a_nul_character_is_stored_on_either_backend(store: Store) -> None:
    # PostgreSQL text cannot hold NUL; the store keeps the rest of the text (U+FFFD in its place).
    store.create_session("s_nul", "before\x00after")
    session = store.get_session("s_nul")
    assert session is not None and session.title.replace("\ufffd", "\x00") == "before\x00after"


def _audio(store: Store, audio_id: str, style: str = "narration") -> str:
    if store.get_report("rep_1") is None:
        result = ResearchResult(status="completed", stop_reason="completed", report_id="rep_1", question="q")
        store_report(store, result, "s_1")
    return store.create_audio(audio_id, "rep_1", "s_1", style, owner_host=this_host(), owner_pid=1)


def test_a_report_has_one_audio_per_style_pending_or_done_and_a_failed_one_is_made_again(store: Store) -> None:
    assert _audio(store, "a_1") == "a_1"
    assert _audio(store, "a_2") == "a_1"  # pending: the same one
    assert _audio(store, "a_3", "overview") == "a_3"  # another style is another audio
    store.finish_audio("a_1", error="espeak-ng failed")
    assert _audio(store, "a_4") == "a_4"  # failed: asked again, made again
    store.finish_audio("a_4", error=None, media_type="audio/mpeg", duration_s=1.0)
    assert _audio(store, "a_5") == "a_4"  # done: the same one
    live = store.live_audio("rep_1", "narration")
    assert live is not None and live["id"] == "a_4" and live["status"] == "done"
    assert store.get_audio("a_2") is None and store.get_audio("a_5") is None  # never stored


def _rewind_schema(database: Database, version: int) -> None:
    with database.migration_transaction() as tx:
        if database.backend == "sqlite":
            tx.execute(f"PRAGMA user_version = {version}")
        else:
            tx.execute("DELETE FROM schema_migrations WHERE version > ?", (version,))


def test_what_a_runs_tools_returned_is_kept_for_its_session_and_goes_with_it(store: Store) -> None:
    notes = ToolDocument(id="d_notes", url="mcp://notes/read?args=ab12", title="notes · read: q3", text="Q3: OAuth.")
    result = ResearchResult(
        status="completed", stop_reason="completed", question="q", report_id="rep_t", tool_documents=[notes]
    )
    session_id = store_report(store, result)
    other = store_report(store, result.model_copy(update={"report_id": "rep_u", "tool_documents": []}))
    assert store.tool_document(session_id, url=notes.url) == notes
    assert store.tool_document(session_id, doc_id="d_notes") == notes
    assert store.tool_document(other, url=notes.url) is None  # read by another session's run only
    assert store.tool_document(session_id, url="mcp://notes/read?args=ffff") is None
    store.delete_session(session_id)
    assert store.tool_document(session_id, url=notes.url) is None


def test_the_migration_to_one_audio_per_style_keeps_the_done_one_or_else_the_newest(store: Store) -> None:
    version = next(n for n, m in enumerate(MIGRATIONS, 1) if m.name == "audio_once")
    database = store.database
    database.execute("DROP INDEX audio_live")
    # Later migrations, applied again with this one:
    for statement in (
        "DROP TABLE tool_documents",
        "DROP TABLE schedules",
        "DROP TABLE schedule_firings",
        "ALTER TABLE reports DROP COLUMN changes",
        "ALTER TABLE reports DROP COLUMN snapshot",
    ):
        database.execute(statement)
    _rewind_schema(database, version - 1)
    rows = [  # id, style, status, created_at: duplicates an earlier Sleuth made
        ("a_old_done", "narration", "done", "2026-01-01T00:00:01"),
        ("a_new_done", "narration", "done", "2026-01-01T00:00:02"),
        ("a_pending", "narration", "pending", "2026-01-01T00:00:03"),
        ("a_pending_1", "overview", "pending", "2026-01-01T00:00:01"),
        ("a_pending_2", "overview", "pending", "2026-01-01T00:00:02"),
        ("a_failed", "overview", "failed", "2026-01-01T00:00:03"),
    ]
    for audio_id, style, status, created in rows:
        database.execute(
            "INSERT INTO audio (id, report_id, session_id, style, status, created_at)"
            " VALUES (?, 'rep_1', 's_1', ?, ?, ?)",
            (audio_id, style, status, created),
        )
    assert migrate(database) == len(MIGRATIONS)
    status = {row["id"]: row["status"] for row in database.fetch_all("SELECT id, status FROM audio")}
    assert status == {
        "a_old_done": "failed",
        "a_new_done": "done",
        "a_pending": "failed",
        "a_pending_1": "failed",
        "a_pending_2": "pending",
        "a_failed": "failed",
    }
    assert _audio(store, "a_next") == "a_new_done"  # and the index holds from now on


def _dead_run(store: Store, run_id: str) -> None:
    store.create_session("s_1", "t")
    store.create_run(
        RunRecord(
            id=run_id,
            session_id="s_1",
            question="q",
            kind="question",
            status="running",
            owner_host=this_host(),
            owner_pid=2**22 + 12345,
            created_at=now_iso(),  # a pid that cannot exist
        )
    )


async def test_writer_batches_and_flush_means_durable(store: Store) -> None:
    _dead_run(store, "r_1")
    commits: list[list[StoredPacket]] = []
    writer = PacketWriter(store.database, commits.append)
    writer.start()
    for seq in range(5000):
        writer.submit(StoredPacket("r_1", seq, "message_delta", 1.7e9 + seq / 1000, f'{{"seq": {seq}}}'))
    await writer.flush()
    # committed before flush returned: another connection sees every packet
    other = open_store()
    try:
        count = len(other.packets_after("r_1", -1, limit=10_000))
        times = other.database.fetch_all("SELECT created_at FROM packets WHERE run_id = ? ORDER BY seq", ("r_1",))
    finally:
        other.close()
    writer.close()
    assert times[-1]["created_at"] == 1.7e9 + 4999 / 1000  # a unix time keeps its milliseconds
    assert count == 5000
    assert [p.seq for batch in commits for p in batch] == list(range(5000))
    assert writer.batches < 5000  # packets shared commits


def test_recovery_appends_error_and_stop_after_the_last_packet(store: Store) -> None:
    _dead_run(store, "r_dead")
    store.insert_packets([("r_dead", 0, "run_start", 0.0, '{"seq":0,"placement":{"turn_index":2}}')])
    live_pid = os.getppid()  # alive: a sibling worker's run is left alone
    store.create_run(
        RunRecord(
            id="r_live",
            session_id="s_1",
            question="q",
            kind="question",
            status="running",
            owner_host=this_host(),
            owner_pid=live_pid,
            created_at=now_iso(),
        )
    )
    assert recover_orphaned_runs(store, default_mode="heavy") == ["r_dead"]
    assert recover_orphaned_runs(store, default_mode="heavy") == []  # idempotent
    rows = store.packets_after("r_dead", 0)
    error, stop = (parse_packet(row.json) for row in rows)
    assert (error.seq, error.obj.type, error.obj.message, error.obj.recoverable) == (1, "error", RESTART_MESSAGE, False)
    assert (stop.seq, stop.obj.type, stop.obj.reason, stop.placement.turn_index) == (2, "stop", "error", 2)
    dead, live = store.get_run("r_dead"), store.get_run("r_live")
    assert dead is not None and dead.status == "error" and dead.error == RESTART_MESSAGE
    assert live is not None and live.status == "running"


def test_recovery_starts_a_run_that_never_started_with_run_start(store: Store) -> None:
    _dead_run(store, "r_unstarted")  # its server died before the engine sent anything
    assert recover_orphaned_runs(store, default_mode="light") == ["r_unstarted"]
    start, error, stop = check_stored([row.json for row in store.packets_after("r_unstarted", -1)])
    assert start.obj.model_dump() == {
        "type": "run_start",
        "session_id": "s_1",
        "question": "q",
        "mode": "light",  # the run asked for none: the settings' mode
        "models": {},
        "time_budget_s": None,
        "sources": [],
        "routes": [],
    }
    assert (error.obj.type, stop.obj.type) == ("error", "stop")


def test_a_run_is_ended_once_whoever_ends_it(store: Store) -> None:
    # Two servers (or a reaper and a worker) finding the same orphan end it together: one ending,
    # one reply, and the second is told it appended nothing.
    _dead_run(store, "r_twice")
    run = store.get_run("r_twice")
    assert run is not None
    first = end_run_as_interrupted(store, run, RESTART_MESSAGE, default_mode="heavy")
    second = end_run_as_interrupted(store, run, "interrupted: the worker running it stopped", default_mode="heavy")
    replies = [m for m in store.list_messages("s_1") if m.role == "assistant"]
    assert [p.type for p in first] == ["run_start", "error", "stop"] and second == []
    assert [m.content for m in replies] == [RESTART_MESSAGE]
    check_stored([row.json for row in store.packets_after("r_twice", -1)])


def test_still_running_names_the_running_runs_among_many(store: Store) -> None:
    store.create_session("s_1", "t")
    ids = [f"r_{i}" for i in range(1203)]  # more than one query's worth
    for run_id in ids:
        record = RunRecord(run_id, "s_1", "q", "question", "running", this_host(), 1, now_iso())
        store.create_run(record)
    for run_id in ids[::2]:
        store.finish_run(run_id, status="completed", stop_reason="completed")
    assert store.still_running([*ids, "r_unknown"]) == set(ids[1::2])
    assert store.still_running([]) == set()
