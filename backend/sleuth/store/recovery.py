"""Crash safety: end the runs a dead server process left `running`.

A run's row names its owner (host, pid). At start-up a run is orphaned when its owner is this
very pid (a previous incarnation, e.g. pid 1 in a restarted container), another host, or a pid
that no longer exists. Runs of live sibling workers on the same host are left alone.

The ending is appended with the next seqs after the last stored packet: an `error` packet
(recoverable: false) and `stop` (reason `error`), so the run still replays and ends like
every run. Idempotent: a crash half-way through recovery is finished by the next start.
"""

from __future__ import annotations

import json
import os
import socket
import time

from sleuth.store.ids import new_id
from sleuth.store.packet_writer import StoredPacket
from sleuth.store.records import MessageRecord, RunRecord, now_iso
from sleuth.store.store import Store
from sleuth.stream.packets import Error, Packet, Placement, Stop

RESTART_MESSAGE = "interrupted by server restart"
SHUTDOWN_MESSAGE = "interrupted by server shutdown"


def this_host() -> str:
    return socket.gethostname()


def owner_is_dead(run: RunRecord) -> bool:
    return process_is_dead(run.owner_host, run.owner_pid)


def process_is_dead(host: str, pid: int) -> bool:
    """Whether the process that owns a row (a run, an audio job) can no longer finish it."""
    if host != this_host() or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # exists, owned by someone else
    return False


def end_run_as_interrupted(store: Store, run: RunRecord, message: str) -> list[StoredPacket]:
    """Append `error` + `stop` after the run's last stored packet and mark it finished.

    Returns the packets appended, so a live process can also hand them to its subscribers.
    """
    appended: list[StoredPacket] = []
    last = store.last_packet(run.id)
    if last is None or last.type != "stop":
        next_seq = last.seq + 1 if last else 0
        turn_index = json.loads(last.json)["placement"]["turn_index"] if last else 0
        placement = Placement(turn_index=turn_index)
        error = Packet(seq=next_seq, run_id=run.id, placement=placement, obj=Error(message=message, recoverable=False))
        stop = Packet(seq=next_seq + 1, run_id=run.id, placement=placement, obj=Stop(reason="error"))
        now = time.time()
        appended = [
            StoredPacket(run.id, error.seq, "error", now, error.model_dump_json()),
            StoredPacket(run.id, stop.seq, "stop", now, stop.model_dump_json()),
        ]
        store.insert_packets([(p.run_id, p.seq, p.type, p.created_at, p.json) for p in appended])
        reason = "error"
    else:
        reason = json.loads(last.json)["obj"]["reason"]
    store.finish_run(
        run.id,
        status="error",
        stop_reason=reason,
        error=message,
        assistant_message=MessageRecord(
            id=new_id("m"),
            session_id=run.session_id,
            role="assistant",
            content=message,
            run_id=run.id,
            created_at=now_iso(),
        ),
    )
    return appended


def recover_orphaned_runs(store: Store) -> list[str]:
    """End every orphaned `running` run; returns their ids."""
    recovered = []
    for run in store.running_runs():
        if owner_is_dead(run):
            end_run_as_interrupted(store, run, RESTART_MESSAGE)
            recovered.append(run.id)
    return recovered
