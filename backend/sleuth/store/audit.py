"""Rows of the audit of administrators' reads of other users' research (`admin_audit`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sleuth.store.database import Database

# What was read: a user's list of sessions, or one session with its messages, runs and reports.
AdminAction = Literal["list_sessions", "read_session"]


@dataclass(frozen=True)
class AdminRead:
    id: str
    at: float  # epoch seconds
    admin_id: str
    admin_name: str
    user_id: str  # whose research was read
    user_name: str
    action: AdminAction
    session_id: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> AdminRead:
        return cls(
            id=row["id"],
            at=float(row["at"]),
            admin_id=row["admin_id"],
            admin_name=row["admin_name"],
            user_id=row["user_id"],
            user_name=row["user_name"],
            action=row["action"],
            session_id=row["session_id"],
        )


class AuditStore:
    def __init__(self, database: Database) -> None:
        self.database = database

    def add(self, read: AdminRead) -> None:
        self.database.execute(
            "INSERT INTO admin_audit (id, at, admin_id, admin_name, user_id, user_name, action, session_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                read.id,
                read.at,
                read.admin_id,
                read.admin_name,
                read.user_id,
                read.user_name,
                read.action,
                read.session_id,
            ),
        )

    def recent(self, limit: int, offset: int = 0) -> list[AdminRead]:
        """Newest first."""
        rows = self.database.fetch_all(
            "SELECT * FROM admin_audit ORDER BY at DESC, rowid DESC LIMIT ? OFFSET ?", (limit, offset)
        )
        return [AdminRead.from_row(row) for row in rows]
