"""Request and response bodies of the HTTP API (what /docs shows)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from sleuth.config import Mode
from sleuth.research.types import ResearchResult
from sleuth.store import MessageRecord, RunRecord, SessionRecord


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _storable(value: str) -> str:
    # JSON may escape a lone surrogate ("\ud800"); it is not Unicode text and cannot be stored.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("contains an unpaired surrogate, which is not valid Unicode text") from None
    return value


Text = Annotated[str, AfterValidator(_storable)]


class SessionCreate(BaseModel):
    title: Text = Field(
        default="", max_length=200, description="Shown in the session list; defaults to the first question."
    )


class MessageCreate(BaseModel):
    content: Text = Field(description="A new question, or the answer to the clarification questions just asked.")
    mode: Mode | None = Field(default=None, description="`light` or `heavy`; unset: the server's default.")
    clarify: bool | None = Field(
        default=None, description="Ask clarification questions first; unset: the server's default."
    )

    _content_not_blank = field_validator("content")(_not_blank)


class ResearchCreate(BaseModel):
    question: Text
    mode: Mode | None = None
    clarify: bool | None = None

    _question_not_blank = field_validator("question")(_not_blank)


class SessionOut(BaseModel):
    id: str
    title: str
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, record: SessionRecord) -> SessionOut:
        return cls(id=record.id, title=record.title, created_at=record.created_at, updated_at=record.updated_at)


class MessageOut(BaseModel):
    id: str
    role: Literal["user", "assistant"]
    content: str
    run_id: str | None
    created_at: str

    @classmethod
    def of(cls, record: MessageRecord) -> MessageOut:
        return cls(
            id=record.id, role=record.role, content=record.content, run_id=record.run_id, created_at=record.created_at
        )


class RunOut(BaseModel):
    id: str
    session_id: str
    question: str
    kind: Literal["question", "clarification_answer"]
    status: Literal["running", "completed", "waiting_for_input", "error", "cancelled"]
    stop_reason: str | None
    mode: str | None
    report_id: str | None
    error: str | None
    clarification_questions: list[str]
    answers_run_id: str | None
    created_at: str
    finished_at: str | None
    events_url: str

    @classmethod
    def of(cls, record: RunRecord) -> RunOut:
        return cls(
            id=record.id,
            session_id=record.session_id,
            question=record.question,
            kind=record.kind,
            status=record.status,
            stop_reason=record.stop_reason,
            mode=record.mode,
            report_id=record.report_id,
            error=record.error,
            clarification_questions=record.clarification_questions,
            answers_run_id=record.answers_run_id,
            created_at=record.created_at,
            finished_at=record.finished_at,
            events_url=f"/api/runs/{record.id}/events",
        )


class SessionDetail(SessionOut):
    messages: list[MessageOut]
    runs: list[RunOut]


class RunCreated(BaseModel):
    run_id: str
    session_id: str
    kind: Literal["question", "clarification_answer"] = Field(
        description="`clarification_answer` when the message answered the previous run's questions."
    )
    events_url: str


class CancelOut(BaseModel):
    run_id: str
    status: str = Field(description="The run's status after the cancel request.")
    cancelled: bool = Field(description="False when the run had already ended.")


class ReportOut(ResearchResult):
    model_config = ConfigDict(title="Report")

    run_id: str
    session_id: str
    created_at: str


class HealthOut(BaseModel):
    status: Literal["ok"]
    version: str
    active_runs: int
    max_runs: int


class ErrorOut(BaseModel):
    detail: str
