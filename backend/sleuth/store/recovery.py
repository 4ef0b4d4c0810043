"""Crash safety: end the runs a dead server process left `running`.

A run's row names its owner (host, pid). At start-up a run is orphaned when its owner is this
very pid (a previous incarnation, e.g. pid 1 in a restarted container), another host, or a pid
that no longer exists. Runs of live sibling workers on the same host are left alone.

The ending is appended with the next seqs after the last stored packet: an `error` packet
(recoverable: false) and `stop` (reason `error`), after a `run_start` when the run had not
started, so the run still replays, starts and ends like every run (stream/ending.py). Each run
is ended in one transaction, once: a crash half-way through recovery is finished by the next
start, and two processes ending the same run at once append one ending between them.
"""

from __future__ import annotations

import json
import os
import socket
import time

from sleuth.config import Mode
from sleuth.core.ids import new_id
from sleuth.store.packet_writer import StoredPacket
from sleuth.store.records import MessageRecord, PacketRow, RunRecord, RunStatus, now_iso
from sleuth.store.store import Store
from sleuth.stream.ending import closing, unstarted_run_start
from sleuth.stream.packets import Packet, Placement, StopReason

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


def end_run_as_interrupted(store: Store, run: RunRecord, message: str, *, default_mode: Mode) -> list[StoredPacket]:
    """Append `error` + `stop` after the run's last stored packet (`run_start` first if there is
    none) and mark it finished.

    Returns the packets appended, so a live process can also hand them to its subscribers.
    `default_mode` is the settings' mode, named by the `run_start` of a run that had none.
    """
    return _end_run(store, run, status="error", reason="error", error=message, reply=message, default_mode=default_mode)


def end_run_as_cancelled(store: Store, run: RunRecord, *, default_mode: Mode) -> list[StoredPacket]:
    """End a run cancelled before any engine started it (it was still queued): `stop` (cancelled)."""
    return _end_run(
        store, run, status="cancelled", reason="cancelled", error=None, reply=CANCELLED_REPLY, default_mode=default_mode
    )


def _end_run(
    store: Store,
    run: RunRecord,
    *,
    status: RunStatus,
    reason: StopReason,
    error: str | None,
    reply: str,
    default_mode: Mode,
) -> list[StoredPacket]:
    def close(last: PacketRow | None) -> tuple[list[StoredPacket], str]:
        if last is not None and last.type == "stop":  # the engine ended it; only its outcome was lost
            return [], str(json.loads(last.json)["obj"]["reason"])
        start = unstarted_run_start(session_id=run.session_id, question=run.question, mode=run.mode or default_mode)
        objs = closing(started=last is not None, run_start=start, error=error, reason=reason)
        placement = Placement(turn_index=json.loads(last.json)["placement"]["turn_index"] if last else 0)
        now = time.time()
        first = last.seq + 1 if last else 0
        packets = [Packet(seq=seq, run_id=run.id, placement=placement, obj=obj) for seq, obj in enumerate(objs, first)]
        return [StoredPacket(run.id, p.seq, p.obj.type, now, p.model_dump_json()) for p in packets], reason

    message = MessageRecord(
        id=new_id("m"), session_id=run.session_id, role="assistant", content=reply, run_id=run.id, created_at=now_iso()
    )
    return store.end_run(run.id, close, status=status, error=error, reply=message)


def recover_orphaned_runs(store: Store, *, default_mode: Mode) -> list[str]:
    """End every orphaned `running` run; returns their ids."""
    recovered = []
    for run in store.running_runs():
        if owner_is_dead(run):
            end_run_as_interrupted(store, run, RESTART_MESSAGE, default_mode=default_mode)
            recovered.append(run.id)
    return recovered
