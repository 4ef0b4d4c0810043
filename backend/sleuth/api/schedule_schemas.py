"""Request and response bodies of the schedules API (docs/schedules.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sleuth.api.schemas import Text, _time_budget
from sleuth.config import Mode
from sleuth.stream.packets import ChangeCounts

Notify = Literal["always", "on_change", "never"]


class _Request(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class ScheduleCreate(_Request):
    question: Text = Field(min_length=1, max_length=4000, description="The question asked at every firing.")
    cron: str | None = Field(default=None, max_length=200, description="A cron expression (`0 7 * * 1-5`).")
    every: str | None = Field(default=None, max_length=40, description="An interval instead of cron: `6h`, `1h30m`.")
    timezone: str = Field(default="UTC", max_length=64, description="An IANA zone (Europe/Berlin) for `cron`.")
    sources: list[str] | None = Field(
        default=None, max_length=100, description="Names from `GET /api/sources` to search; unset: the defaults."
    )
    mode: Mode | None = Field(default=None, description="`light` or `heavy`; unset: the server's default.")
    time_budget_s: float | None = _time_budget()
    notify: Notify = Field(
        default="on_change",
        description="When to call the webhook: after `always` every run, `on_change` only when something changed, "
        "or `never`.",
    )
    webhook_url: str | None = Field(default=None, max_length=2000, description="Where deliveries are POSTed.")
    webhook_secret: str | None = Field(
        default=None,
        min_length=16,
        max_length=200,
        description="The HMAC-SHA256 key deliveries are signed with; unset: one is made and returned once.",
    )
    email: str | None = Field(
        default=None, max_length=320, description="Also e-mail what changed here (needs SLEUTH_SMTP_HOST)."
    )


class ScheduleUpdate(_Request):
    """Only the fields given change; `paused` pauses or resumes."""

    question: Text | None = Field(default=None, min_length=1, max_length=4000)
    cron: str | None = Field(default=None, max_length=200, description="A cron expression (`0 7 * * 1-5`).")
    every: str | None = Field(default=None, max_length=40, description="An interval instead of cron: `6h`, `1h30m`.")
    timezone: str | None = Field(default=None, max_length=64)
    sources: list[str] | None = Field(default=None, max_length=100)
    mode: Mode | None = None
    time_budget_s: float | None = _time_budget()
    notify: Notify | None = None
    webhook_url: str | None = Field(default=None, max_length=2000, description="Empty or null: no webhook.")
    webhook_secret: str | None = Field(default=None, min_length=16, max_length=200)
    email: str | None = Field(default=None, max_length=320, description="Empty or null: no e-mail.")
    paused: bool | None = None


class ChangeSummary(BaseModel):
    """A run's "what changed" in counts; the items are in its report's `changes`."""

    changed: bool = Field(description="Whether anything is new, gone, dropped or changed.")
    since: str = Field(description="When the previous run ended (UTC ISO).")
    counts: ChangeCounts


class FiringOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    due_at: str
    fired_at: str
    status: Literal["fired", "skipped", "failed"]
    run_id: str | None
    detail: str | None = Field(description="Why it was skipped or failed; `run now` for a run started by hand.")
    delivery: Literal["none", "pending", "sending", "delivered", "failed", "not_needed"]
    delivery_detail: str | None
    delivery_attempts: int
    run_status: Literal["running", "completed", "waiting_for_input", "error", "cancelled"] | None = Field(
        default=None, description="Its run's status; none when no run started."
    )
    report_id: str | None = Field(default=None, description="Its run's report, once written.")
    changes: ChangeSummary | None = Field(
        default=None, description="What its run found changed; none for a schedule's first run or without a report."
    )


class ScheduleOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    session_id: str = Field(description="The schedule's session: every firing is a run in it.")
    question: str
    cron: str | None
    every_s: int | None
    timezone: str
    sources: list[str] | None
    mode: str | None
    time_budget_s: float | None
    notify: Notify
    webhook_url: str | None
    webhook_secret_set: bool = Field(description="Whether deliveries are signed (the secret is never shown again).")
    email: str | None
    paused: bool
    next_due_at: str = Field(description="The next due time (UTC).")
    created_at: str
    updated_at: str
    last_firing: FiringOut | None = None


class ScheduleCreated(ScheduleOut):
    webhook_secret: str | None = Field(description="The signing secret, shown this once.")


class ScheduleDetail(ScheduleOut):
    firings: list[FiringOut] = Field(description="The latest firings, newest first.")


class ScheduleRunStarted(BaseModel):
    run_id: str
    session_id: str
    firing_id: str
    events_url: str
