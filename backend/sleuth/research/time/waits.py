"""Time a run spends waiting for its user does not count against its time budget.

While the run waits, its deadlines move forward by the longest possible wait; afterwards they are
set to the originals plus the time really waited. The run-level watchdog (`run_until` with a
deadline function) re-reads the deadline when it wakes, so a moved deadline is honoured.
"""

from __future__ import annotations

import dataclasses

from sleuth.research.time.deadlines import RunDeadlines


def shift_deadlines(deadlines: RunDeadlines, by_s: float) -> RunDeadlines:
    """Every absolute deadline `by_s` later: they all follow `started_at`."""
    return dataclasses.replace(deadlines, started_at=deadlines.started_at + by_s)
