"""Crash safety for audio: a job whose process died is ended as failed at start-up, never left pending.

Failed rather than re-queued: a job that brought its server down (a huge report, a speech engine
that hangs) would do it again on every start, while asking again is one click in the player.
Runs are ended the same way, not resumed. Each row names its owner (host, pid); jobs of a live
sibling process on the same host are left alone.
"""

from __future__ import annotations

from sleuth.store.recovery import process_is_dead
from sleuth.store.store import Store

RESTART_MESSAGE = "interrupted by a server restart; ask for it again"
SHUTDOWN_MESSAGE = "interrupted by a server shutdown; ask for it again"
LOST_MESSAGE = "interrupted: the server making it stopped; ask for it again"  # scaled out, any server says so


def fail_orphaned_audio(store: Store) -> list[str]:
    """Mark every pending audio job of a dead process failed; returns their ids."""
    failed = []
    for row in store.pending_audio():
        if process_is_dead(row["owner_host"], row["owner_pid"]):
            store.finish_audio(row["id"], error=RESTART_MESSAGE)
            failed.append(row["id"])
    return failed
