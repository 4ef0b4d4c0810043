"""A schedule as a user asks for it (API body, CLI options), checked and turned into the stored row.

Both entry points go through here, so a bad cron, zone, interval, notify value or webhook URL is
refused with the same message: the API answers 422, the CLI prints it and exits non-zero.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, get_args

from sleuth.config import Mode, Settings
from sleuth.core.ids import new_id
from sleuth.schedules.scheduler import timing_of
from sleuth.schedules.timing import Timing, TimingError, check_zone, timing
from sleuth.store.records import now_iso, session_title
from sleuth.store.schedules import Notify, ScheduleRecord, utc_text
from sleuth.tools.base import ToolError
from sleuth.tools.web.ssrf import AllowList, SsrfGuard

NOTIFY_VALUES: tuple[str, ...] = get_args(Notify)
MAX_QUESTION_CHARS = 4000


class ScheduleError(ValueError):
    """A schedule that cannot be kept as asked; the message names the field and the fix."""


@dataclass(frozen=True)
class ScheduleSpec:
    question: str
    cron: str | None = None
    every: str | None = None
    timezone: str = "UTC"
    sources: list[str] | None = None
    mode: Mode | None = None
    time_budget_s: float | None = None
    notify: Notify = "on_change"
    webhook_url: str | None = None
    webhook_secret: str | None = None
    email: str | None = None


def check_webhook(url: str, settings: Settings) -> str:
    """An http(s) URL the SSRF guard lets through (private hosts only when allow-listed)."""
    guard = SsrfGuard(allow=AllowList.parse(settings.webhook_allow_hosts))
    try:
        guard.check_static(url)
    except ToolError as exc:
        raise ScheduleError(f"webhook_url: {exc}") from None
    return url


_EMAIL = re.compile(r"[^@\s<>,;\"]+@[^@\s<>,;\"]+\.[^@\s<>,;\"]+")


def check_email(address: str, settings: Settings) -> str:
    """One plain address (no display name, no header tricks), and an SMTP server to send through."""
    if not _EMAIL.fullmatch(address):
        raise ScheduleError(f"email: {address[:200]!r} is not an e-mail address (name@example.com)")
    if not settings.smtp_host:
        raise ScheduleError("email: no SMTP server is configured (SLEUTH_SMTP_HOST)")
    return address


def _question(text: str) -> str:
    question = text.strip()
    if not question:
        raise ScheduleError("question: it is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise ScheduleError(f"question: longer than {MAX_QUESTION_CHARS} characters")
    return question


def _notify(value: str) -> Notify:
    for known in get_args(Notify):
        if value == known:
            return known  # type: ignore[no-any-return]  # a member of the Literal, as get_args gives it
    raise ScheduleError(f"notify: {value!r} is not one of {', '.join(NOTIFY_VALUES)}")


def _timing(cron: str | None, every: str | None, zone: str) -> Timing:
    try:
        return timing(cron, every, zone)
    except TimingError as exc:
        raise ScheduleError(str(exc)) from None


def new_schedule(spec: ScheduleSpec, settings: Settings, now: datetime) -> tuple[ScheduleRecord, str]:
    """The row for a new schedule, first due after `now`, and its session's title."""
    question = _question(spec.question)
    due = _timing(spec.cron, spec.every, spec.timezone)
    url = check_webhook(spec.webhook_url, settings) if spec.webhook_url else None
    secret = spec.webhook_secret or (secrets.token_urlsafe(24) if url else None)
    email = check_email(spec.email, settings) if spec.email else None
    created = now_iso()
    record = ScheduleRecord(
        id=new_id("sch"),
        session_id=new_id("s"),
        question=question,
        cron=due.cron,
        every_s=due.every_s,
        timezone=due.timezone,
        sources=spec.sources,
        mode=spec.mode,
        time_budget_s=spec.time_budget_s,
        notify=_notify(spec.notify),
        webhook_url=url,
        webhook_secret=secret,
        email=email,
        paused=False,
        next_due_at=utc_text(due.next_after(now)),
        created_at=created,
        updated_at=created,
    )
    return record, session_title(question)


def edited(current: ScheduleRecord, changes: Mapping[str, Any], settings: Settings, now: datetime) -> dict[str, Any]:
    """The columns to write for a PATCH: checked, with the due time recomputed when the timing
    changes or the schedule is resumed (a paused schedule does not fire what it missed)."""
    columns: dict[str, Any] = {}
    if "question" in changes:
        columns["question"] = _question(changes["question"])
    timing_keys = {"cron", "every", "timezone"} & set(changes)
    if timing_keys:
        cron, every = changes.get("cron"), changes.get("every")
        if "cron" not in changes and "every" not in changes:  # only the zone: keep the form there is
            cron = current.cron
            every = f"{current.every_s}s" if current.every_s is not None else None
        zone = check_zone_or_error(changes.get("timezone") or current.timezone)
        due = _timing(cron, every, zone)
        columns.update(cron=due.cron, every_s=due.every_s, timezone=due.timezone)
        columns["next_due_at"] = utc_text(due.next_after(now))
    for name in ("sources", "mode", "time_budget_s"):
        if name in changes:
            columns[name] = changes[name]
    if changes.get("webhook_secret"):  # replaced, never cleared: a webhook is always signed
        columns["webhook_secret"] = changes["webhook_secret"]
    if "notify" in changes:
        columns["notify"] = _notify(changes["notify"])
    if "webhook_url" in changes:
        url = changes["webhook_url"]
        columns["webhook_url"] = check_webhook(url, settings) if url else None
        if url and not (changes.get("webhook_secret") or current.webhook_secret):
            columns["webhook_secret"] = secrets.token_urlsafe(24)
    if "email" in changes:
        columns["email"] = check_email(changes["email"], settings) if changes["email"] else None
    if "paused" in changes:
        columns["paused"] = bool(changes["paused"])
        if current.paused and not columns["paused"] and "next_due_at" not in columns:
            columns["next_due_at"] = utc_text(timing_of(current).next_after(now))
    return columns


def check_zone_or_error(name: str) -> str:
    try:
        return check_zone(name)
    except TimingError as exc:
        raise ScheduleError(str(exc)) from None
