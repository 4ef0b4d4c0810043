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

from sleuth.core.ids import new_id
from sleuth.store.packet_writer import StoredPacket
from sleuth.store.records import MessageRecord, RunRecord, RunStatus, now_iso
from sleuth.store.store import Store
from sleuth.stream.packets import Error, Packet, Placement, Stop, StopReason

RESTART_MESSAGE = "interrupted by server restart"
SHUTDOWN_MESSAGE = "interrupted by server shutdown"
CANCELLED_REPLY = "Research cancelled."  # the assistant's reply to a cancelled run


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
    return _end_run(store, run, status="error", reason="error", error=message, reply=message)


def end_run_as_cancelled(store: Store, run: RunRecord) -> list[StoredPacket]:
    """End a run cancelled before any engine started it (it was still queued): `stop` (cancelled)."""
    return _end_run(store, run, status="cancelled", reason="cancelled", error=None, reply=CANCELLED_REPLY)


def _end_run(
    store: Store, run: RunRecord, *, status: RunStatus, reason: StopReason, error: str | None, reply: str
) -> list[StoredPacket]:
    appended: list[StoredPacket] = []
    last = store.last_packet(run.id)
    if last is None or last.type != "stop":
        next_seq = last.seq + 1 if last else 0
        turn_index = json.loads(last.json)["placement"]["turn_index"] if last else 0
        placement = Placement(turn_index=turn_index)
        objs: list[Error | Stop] = [Error(message=error, recoverable=False)] if error is not None else []
        objs.append(Stop(reason=reason))
        now = time.time()
        for seq, obj in enumerate(objs, start=next_seq):
            packet = Packet(seq=seq, run_id=run.id, placement=placement, obj=obj)
            appended.append(StoredPacket(run.id, seq, obj.type, now, packet.model_dump_json()))
        store.insert_packets([(p.run_id, p.seq, p.type, p.created_at, p.json) for p in appended])
        stop_reason: str = reason
    else:
        stop_reason = json.loads(last.json)["obj"]["reason"]
    store.finish_run(
        run.id,
        status=status,
        stop_reason=stop_reason,
        error=error,
        assistant_message=MessageRecord(
            id=new_id("m"),
            session_id=run.session_id,
            role="assistant",
            content=reply,
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
