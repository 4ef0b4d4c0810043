"""The store on its own: versioned migrations, batched durable packet writes, crash recovery."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from sleuth.store import PacketWriter, RunRecord, Store, StoredPacket
from sleuth.store.migrations import MIGRATIONS, SchemaTooNew, migrate
from sleuth.store.records import now_iso
from sleuth.store.recovery import RESTART_MESSAGE, recover_orphaned_runs, this_host
from sleuth.stream.packets import parse_packet


def test_schema_is_created_versioned_and_in_wal_mode(tmp_path: Path) -> None:
    store = Store(tmp_path)
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "messages", "runs", "packets", "reports"} <= tables
    assert migrate(store._conn()) == len(MIGRATIONS)  # idempotent
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.commit()
    with pytest.raises(SchemaTooNew):
        Store(tmp_path)


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


async def test_writer_batches_and_flush_means_durable(tmp_path: Path) -> None:
    store = Store(tmp_path)
    _dead_run(store, "r_1")
    commits: list[list[StoredPacket]] = []
    writer = PacketWriter(store.path, commits.append)
    writer.start()
    for seq in range(5000):
        writer.submit(StoredPacket("r_1", seq, "message_delta", 0.0, f'{{"seq": {seq}}}'))
    await writer.flush()
    # committed before flush returned: another connection sees every packet
    count = sqlite3.connect(store.path).execute("SELECT COUNT(*) FROM packets").fetchone()[0]
    writer.close()
    assert count == 5000
    assert [p.seq for batch in commits for p in batch] == list(range(5000))
    assert writer.batches < 5000  # packets shared commits


def test_recovery_appends_error_and_stop_after_the_last_packet(tmp_path: Path) -> None:
    store = Store(tmp_path)
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
    assert recover_orphaned_runs(store) == ["r_dead"]
    assert recover_orphaned_runs(store) == []  # idempotent
    rows = store.packets_after("r_dead", 0)
    error, stop = (parse_packet(row.json) for row in rows)
    assert (error.seq, error.obj.type, error.obj.message, error.obj.recoverable) == (1, "error", RESTART_MESSAGE, False)
    assert (stop.seq, stop.obj.type, stop.obj.reason, stop.placement.turn_index) == (2, "stop", "error", 2)
    dead, live = store.get_run("r_dead"), store.get_run("r_live")
    assert dead is not None and dead.status == "error" and dead.error == RESTART_MESSAGE
    assert live is not None and live.status == "running"
