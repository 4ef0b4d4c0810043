"""Schedules and their firings: every read and write of the `schedules` and `schedule_firings` rows.

A schedule owns one ordinary session (made with it); each firing that starts research is an
ordinary run in that session. Due times are stored as UTC ISO text (`utc_text`), which orders as
the instants do, so `next_due_at <= ?` compares them on either backend.

Exactly once per due time: `claim` moves `next_due_at` on only if it still holds the due time the
caller read (`UPDATE … WHERE id = ? AND next_due_at = ? RETURNING id`), so of several schedulers
that read the same due time one gets the row back; the firing's `(schedule_id, due_at)` is unique
besides. One mechanism for SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any, Literal

from sleuth.config import Mode
from sleuth.store.database import Database
from sleuth.store.errors import NotFound
from sleuth.store.records import OwnerScope, now_iso

Notify = Literal["always", "on_change", "never"]
FiringStatus = Literal["fired", "skipped", "failed"]
# `none`: nothing to send (skipped, failed, or notify=never); `pending`: to send once its run ends;
# `sending`: a scheduler has claimed it; then `delivered`, `failed` or `not_needed` (on_change, no change).
Delivery = Literal["none", "pending", "sending", "delivered", "failed", "not_needed"]


def utc_text(moment: datetime) -> str:
    """A due time as stored: UTC, milliseconds, ISO (the format `now_iso` writes too)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def from_utc_text(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@dataclass(frozen=True)
class ScheduleRecord:
    id: str
    session_id: str
    question: str
    cron: str | None
    every_s: int | None
    timezone: str
    sources: list[str] | None
    mode: Mode | None
    time_budget_s: float | None
    notify: Notify
    webhook_url: str | None
    webhook_secret: str | None
    email: str | None
    paused: bool
    next_due_at: str
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ScheduleRecord:
        values = {f.name: row[f.name] for f in fields(cls)}
        values["sources"] = json.loads(row["sources"] or "null")
        values["paused"] = bool(row["paused"])
        return cls(**values)


@dataclass(frozen=True)
class FiringRecord:
    id: str
    schedule_id: str
    due_at: str
    fired_at: str
    status: FiringStatus
    run_id: str | None = None
    detail: str | None = None
    delivery: Delivery = "none"
    delivery_detail: str | None = None
    delivery_attempts: int = 0

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> FiringRecord:
        return cls(**{f.name: row[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class RunOutcome:
    """How a firing's run stands: its status, its latest report and that report's `changes`."""

    status: str
    report_id: str | None
    changes: dict[str, Any] | None


# What PATCH may change (the session and the times of the row are the store's).
EDITABLE = (
    "question",
    "cron",
    "every_s",
    "timezone",
    "sources",
    "mode",
    "time_budget_s",
    "notify",
    "webhook_url",
    "webhook_secret",
    "email",
    "paused",
    "next_due_at",
)


def _column_value(name: str, value: Any) -> Any:
    if name == "sources":
        return json.dumps(value)
    if name == "paused":
        return int(bool(value))
    return value


class ScheduleStore:
    """Schedules on the store's database (`Store.database`), as its scope sees them: one user's
    (their sessions' schedules, through `Store.owned_by`) or every user's (the scheduler's)."""

    def __init__(self, database: Database, scope: OwnerScope | None = None) -> None:
        self.database = database
        self._scope = scope or OwnerScope()

    def seen_as(self, scope: OwnerScope) -> ScheduleStore:
        """These schedules as `scope` sees them (`Store.owned_by` passes its own)."""
        return ScheduleStore(self.database, scope)

    def create(self, schedule: ScheduleRecord, session_title: str) -> None:
        """Insert the schedule with its new session, in one transaction."""
        columns = [f.name for f in fields(ScheduleRecord)]
        values = [_column_value(name, getattr(schedule, name)) for name in columns]
        with self.database.transaction() as tx:
            tx.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at, owner_id) VALUES (?, ?, ?, ?, ?)",
                (schedule.session_id, session_title, schedule.created_at, schedule.created_at, self._scope.owner),
            )
            tx.execute(f"INSERT INTO schedules ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values)

    def get(self, schedule_id: str) -> ScheduleRecord | None:
        mine, owner = self._scope.rows()
        row = self.database.fetch_one(f"SELECT * FROM schedules WHERE id = ?{mine}", (schedule_id, *owner))
        return ScheduleRecord.from_row(row) if row else None

    def all(self) -> list[ScheduleRecord]:
        mine, owner = self._scope.rows()
        rows = self.database.fetch_all(f"SELECT * FROM schedules WHERE 1 = 1{mine} ORDER BY created_at, id", owner)
        return [ScheduleRecord.from_row(row) for row in rows]

    def update(self, schedule_id: str, changes: Mapping[str, Any]) -> ScheduleRecord:
        """Set the given editable columns; NotFound if the schedule is gone."""
        unknown = set(changes) - set(EDITABLE)
        if unknown:
            raise ValueError(f"not editable: {', '.join(sorted(unknown))}")
        assignments = [f"{name} = ?" for name in changes] + ["updated_at = ?"]
        values = [_column_value(name, value) for name, value in changes.items()] + [now_iso()]
        mine, owner = self._scope.rows()
        with self.database.transaction() as tx:
            tx.execute(
                f"UPDATE schedules SET {', '.join(assignments)} WHERE id = ?{mine}", (*values, schedule_id, *owner)
            )
            row = tx.fetch_one(f"SELECT * FROM schedules WHERE id = ?{mine}", (schedule_id, *owner))
        if row is None:
            raise NotFound("schedule", schedule_id)
        return ScheduleRecord.from_row(row)

    def delete(self, schedule_id: str) -> bool:
        """Remove the schedule and its firings; its session, runs and reports stay (ordinary history)."""
        mine, owner = self._scope.rows()
        with self.database.transaction() as tx:
            if tx.fetch_one(f"SELECT id FROM schedules WHERE id = ?{mine}", (schedule_id, *owner)) is None:
                return False
            tx.execute("DELETE FROM schedule_firings WHERE schedule_id = ?", (schedule_id,))
            tx.execute("DELETE FROM schedules WHERE id = ?", (schedule_id,))
        return True

    # -- firing ------------------------------------------------------------------------------

    def due(self, now: datetime) -> list[ScheduleRecord]:
        """Schedules not paused whose next due time has come."""
        rows = self.database.fetch_all(
            "SELECT * FROM schedules WHERE paused = 0 AND next_due_at <= ? ORDER BY next_due_at, id",
            (utc_text(now),),
        )
        return [ScheduleRecord.from_row(row) for row in rows]

    def claim(self, schedule_id: str, due_at: str, next_due_at: str) -> bool:
        """Move the schedule from `due_at` on to `next_due_at`; True for the one caller that did."""
        with self.database.transaction() as tx:
            row = tx.fetch_one(
                "UPDATE schedules SET next_due_at = ?, updated_at = ? WHERE id = ? AND next_due_at = ? RETURNING id",
                (next_due_at, now_iso(), schedule_id, due_at),
            )
        return row is not None

    def session_running(self, session_id: str) -> bool:
        row = self.database.fetch_one(
            "SELECT id FROM runs WHERE session_id = ? AND status = 'running' LIMIT 1", (session_id,)
        )
        return row is not None

    def record_firing(self, firing: FiringRecord) -> bool:
        """Store a firing; False if its due time already has one (the unique key's backstop)."""
        columns = [f.name for f in fields(FiringRecord)]
        with self.database.transaction() as tx:
            row = tx.fetch_one(
                f"INSERT INTO schedule_firings ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
                " ON CONFLICT DO NOTHING RETURNING id",
                [getattr(firing, name) for name in columns],
            )
        return row is not None

    def firings(self, schedule_id: str, limit: int = 50) -> list[FiringRecord]:
        """The schedule's firings, newest first."""
        mine, owner = self._scope.rows()
        rows = self.database.fetch_all(
            "SELECT * FROM schedule_firings WHERE schedule_id = ?"
            f" AND schedule_id IN (SELECT id FROM schedules WHERE 1 = 1{mine})"
            " ORDER BY due_at DESC, rowid DESC LIMIT ?",
            (schedule_id, *owner, limit),
        )
        return [FiringRecord.from_row(row) for row in rows]

    def outcomes(self, run_ids: list[str]) -> dict[str, RunOutcome]:
        """The outcome of each of these runs that exists, by run id (one query for a list of firings)."""
        if not run_ids:
            return {}
        rows = self.database.fetch_all(
            "SELECT r.id AS run_id, r.status AS status, p.id AS report_id, p.changes AS changes"
            " FROM runs r LEFT JOIN reports p ON p.run_id = r.id"
            f" WHERE r.id IN ({', '.join('?' * len(run_ids))}) ORDER BY p.rowid",
            run_ids,
        )
        # Rows come oldest report first, so a run's latest report is the one that stays.
        found: dict[str, RunOutcome] = {}
        for row in rows:
            changes = json.loads(row["changes"] or "null")
            found[row["run_id"]] = RunOutcome(
                row["status"], row["report_id"], changes if isinstance(changes, dict) else None
            )
        return found

    # -- delivery ----------------------------------------------------------------------------

    def deliverable(self) -> list[FiringRecord]:
        """Firings waiting to be delivered whose run has ended."""
        rows = self.database.fetch_all(
            "SELECT f.* FROM schedule_firings f JOIN runs r ON r.id = f.run_id"
            " WHERE f.delivery = 'pending' AND r.status <> 'running' ORDER BY f.fired_at"
        )
        return [FiringRecord.from_row(row) for row in rows]

    def claim_delivery(self, firing_id: str) -> bool:
        """Take a pending delivery for this process; True for the one caller that did."""
        with self.database.transaction() as tx:
            row = tx.fetch_one(
                "UPDATE schedule_firings SET delivery = 'sending' WHERE id = ? AND delivery = 'pending' RETURNING id",
                (firing_id,),
            )
        return row is not None

    def finish_delivery(self, firing_id: str, delivery: Delivery, detail: str | None, attempts: int) -> None:
        self.database.execute(
            "UPDATE schedule_firings SET delivery = ?, delivery_detail = ?, delivery_attempts = ? WHERE id = ?",
            (delivery, detail, attempts, firing_id),
        )

    def run_report(self, run_id: str) -> dict[str, Any] | None:
        """The id, session, status, markdown and `changes` of a run's report (the latest when it has several)."""
        row = self.database.fetch_one(
            "SELECT id, session_id, status, markdown, changes FROM reports WHERE run_id = ?"
            " ORDER BY rowid DESC LIMIT 1",
            (run_id,),
        )
        if row is None:
            return None
        return {**row, "changes": json.loads(row["changes"] or "null")}

    def previous_snapshot(self, session_id: str) -> dict[str, Any] | None:
        """The snapshot kept with the session's latest completed report that has one."""
        row = self.database.fetch_one(
            "SELECT snapshot FROM reports WHERE session_id = ? AND status = 'completed' AND snapshot <> 'null'"
            " ORDER BY rowid DESC LIMIT 1",
            (session_id,),
        )
        snapshot = json.loads(row["snapshot"]) if row else None
        return snapshot if isinstance(snapshot, dict) else None
