"""Rows as typed records. The API turns these into response models; the store never sees HTTP."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from sleuth.config import Mode
from sleuth.core.text import shorten, strip_controls

RunKind = Literal["question", "clarification_answer"]
# `running` until the run ends; then the ResearchResult status, or `cancelled`.
RunStatus = Literal["running", "completed", "waiting_for_input", "error", "cancelled"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


SESSION_TITLE_CHARS = 80


def session_title(question: str) -> str:
    """A new session's title: its first question on one line, shortened to 80 characters at a word
    boundary, without the control and bidi characters no label may hold (core/text.py)."""
    return shorten(strip_controls(question), SESSION_TITLE_CHARS)


@dataclass(frozen=True)
class OwnerScope:
    """Whose rows a view of the store sees: every user's (the server's own view), or one user's
    (`Store.owned_by`). Rows belong to a user through their session's `owner_id`."""

    owner: str | None = None
    scoped: bool = False

    def rows(self, column: str = "session_id") -> tuple[str, tuple[Any, ...]]:
        """SQL (starting with AND) keeping this owner's rows: `column` holds a session id, or is the
        sessions table's own `id`."""
        if not self.scoped:
            return "", ()
        if column == "id":
            return " AND owner_id = ?", (self.owner,)
        return f" AND {column} IN (SELECT id FROM sessions WHERE owner_id = ?)", (self.owner,)


@dataclass(frozen=True)
class SessionRecord:
    id: str
    title: str
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> SessionRecord:
        return cls(id=row["id"], title=row["title"], created_at=row["created_at"], updated_at=row["updated_at"])


@dataclass(frozen=True)
class MessageRecord:
    id: str
    session_id: str
    role: Literal["user", "assistant"]
    content: str
    run_id: str | None
    created_at: str

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MessageRecord:
        return cls(
            id=row["id"],
            session_id=row["session_id"],
            role=row["role"],
            content=row["content"],
            run_id=row["run_id"],
            created_at=row["created_at"],
        )


@dataclass(frozen=True)
class RunRecord:
    id: str
    session_id: str
    question: str
    kind: RunKind
    status: RunStatus
    owner_host: str
    owner_pid: int
    created_at: str
    message_id: str | None = None
    mode: Mode | None = None
    answers_run_id: str | None = None
    stop_reason: str | None = None
    report_id: str | None = None
    error: str | None = None
    clarification_questions: list[str] = field(default_factory=list)
    finished_at: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> RunRecord:
        return cls(
            id=row["id"],
            session_id=row["session_id"],
            question=row["question"],
            kind=row["kind"],
            status=row["status"],
            owner_host=row["owner_host"],
            owner_pid=row["owner_pid"],
            created_at=row["created_at"],
            message_id=row["message_id"],
            mode=row["mode"],
            answers_run_id=row["answers_run_id"],
            stop_reason=row["stop_reason"],
            report_id=row["report_id"],
            error=row["error"],
            clarification_questions=json.loads(row["clarification_questions"]),
            finished_at=row["finished_at"],
        )


@dataclass(frozen=True)
class PacketRow:
    """A stored packet: its JSON text is exactly the SSE `data` and the `--json` line."""

    seq: int
    type: str
    json: str
