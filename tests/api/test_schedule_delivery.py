"""Webhook deliveries of a schedule's runs, to a receiver on 127.0.0.1 (bound to port 0) that checks
the HMAC signature: signed, retried with backoff on the injected clock, recorded on the firing,
nothing sent when `on_change` finds nothing changed, refused by the SSRF guard unless allow-listed,
and never holding up the scheduler.

Store-dependent: runs on SQLite, and on PostgreSQL in scripts/test's second pass.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.core.ids import new_id
from sleuth.schedules.delivery import SIGNATURE_HEADER, Deliverer
from sleuth.schedules.scheduler import Scheduler, fired_now
from sleuth.schedules.specs import ScheduleError, ScheduleSpec, new_schedule
from sleuth.store.records import RunRecord, now_iso
from sleuth.store.schedules import FiringRecord, ScheduleRecord, ScheduleStore
from sleuth.store.store import Store
from sleuth.stream.packets import ChangeCounts, ChangeSet
from sleuth.stream.results import ResearchResult
from sleuth_testkit.clock import ManualClock

SECRET = "s3cret-for-the-test-receiver"


@dataclass
class Receiver:
    """An HTTP endpoint that answers each POST with the next status of `statuses` (then 200)."""

    statuses: list[int] = field(default_factory=list)
    hang: asyncio.Event | None = None  # set: answers only once it is set
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.received.append((headers, body))
        if self.hang is not None:
            await self.hang.wait()
        status = self.statuses.pop(0) if self.statuses else 200
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        writer.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def signed_bodies(self) -> list[dict[str, Any]]:
        """The bodies whose signature checks out; a wrong one fails the test."""
        bodies = []
        for headers, body in self.received:
            expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
            assert hmac.compare_digest(headers[SIGNATURE_HEADER.lower()], expected)
            bodies.append(json.loads(body))
        return bodies


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    endpoint = Receiver()
    server = await asyncio.start_server(endpoint.handle, "127.0.0.1", 0)
    endpoint.port = server.sockets[0].getsockname()[1]
    async with server:
        yield endpoint
        if endpoint.hang is not None:
            endpoint.hang.set()


class Sleeps:
    """A clock whose sleeps return at once and are remembered (the backoff between attempts)."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def now(self) -> float:
        return sum(self.slept)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def _settings(**extra: Any) -> Settings:
    return Settings(webhook_allow_hosts="127.0.0.1", **extra)


def _schedule(store: Store, url: str, notify: str = "always") -> ScheduleRecord:
    spec = ScheduleSpec(question="Q", every="1h", notify=notify, webhook_url=url, webhook_secret=SECRET)  # type: ignore[arg-type]
    record, title = new_schedule(spec, _settings(), datetime.now(UTC))
    ScheduleStore(store.database).create(record, title)
    return record


def _finished_run(store: Store, schedule: ScheduleRecord, changed: bool | None) -> FiringRecord:
    """A run of the schedule that has ended with a report (`changed` None: the first, with no diff)."""
    run_id = new_id("r")
    store.create_run(
        RunRecord(
            id=run_id,
            session_id=schedule.session_id,
            question="Q",
            kind="question",
            status="running",
            owner_host="test",
            owner_pid=os.getpid(),
            created_at=now_iso(),
        )
    )
    changes = None
    if changed is not None:
        changes = ChangeSet(
            since="2026-03-02T06:00:00+00:00",
            previous_report_id="rep_before",
            changed=changed,
            counts=ChangeCounts(claims_changed=int(changed)),
        )
    result = ResearchResult(
        status="completed", stop_reason="completed", report_id=new_id("rep"), question="Q", changes=changes
    )
    store.finish_run(
        run_id,
        status="completed",
        stop_reason="completed",
        report_id=result.report_id,
        result=result,
        session_id=schedule.session_id,
    )
    firing = fired_now(schedule, run_id, datetime.now(UTC))
    ScheduleStore(store.database).record_firing(firing)
    return firing


async def _deliver(store: Store, firing: FiringRecord, clock: Sleeps | None = None, **settings: Any) -> FiringRecord:
    schedules = ScheduleStore(store.database)
    assert schedules.claim_delivery(firing.id)
    await Deliverer(_settings(**settings), store, clock=clock or Sleeps()).deliver(firing)
    (stored,) = [f for f in schedules.firings(firing.schedule_id) if f.id == firing.id]
    return stored


async def test_a_delivery_is_signed_and_carries_the_diff_and_the_report_url(store: Store, receiver: Receiver) -> None:
    schedule = _schedule(store, receiver.url)
    firing = _finished_run(store, schedule, changed=True)
    stored = await _deliver(store, firing, public_url="https://sleuth.example/")
    (body,) = receiver.signed_bodies()
    report = ScheduleStore(store.database).run_report(firing.run_id or "")
    assert report is not None
    assert body["event"] == "schedule.run" and body["schedule_id"] == schedule.id and body["run_id"] == firing.run_id
    assert body["report_url"] == f"https://sleuth.example/api/reports/{report['id']}"
    assert body["changes"]["changed"] is True and body["changes"]["counts"]["claims_changed"] == 1
    assert SECRET not in json.dumps(body)
    assert (stored.delivery, stored.delivery_attempts, stored.delivery_detail) == ("delivered", 1, "HTTP 200")


async def test_a_failing_receiver_is_retried_with_backoff_until_it_answers(store: Store, receiver: Receiver) -> None:
    receiver.statuses = [503, 502]
    firing = _finished_run(store, _schedule(store, receiver.url), changed=True)
    clock = Sleeps()
    stored = await _deliver(store, firing, clock)
    assert len(receiver.signed_bodies()) == 3
    assert (stored.delivery, stored.delivery_attempts) == ("delivered", 3)
    assert len(clock.slept) == 2  # exponential with jitter: half to all of 2 s, then of 4 s
    assert 1.0 <= clock.slept[0] <= 2.0 and 2.0 <= clock.slept[1] <= 4.0


async def test_attempts_run_out_and_a_refusing_receiver_is_not_asked_again(store: Store, receiver: Receiver) -> None:
    receiver.statuses = [500, 500, 500]
    down = await _deliver(store, _finished_run(store, _schedule(store, receiver.url), True), webhook_attempts=3)
    assert (down.delivery, down.delivery_attempts, down.delivery_detail) == ("failed", 3, "HTTP 500")
    receiver.statuses = [403]
    refused = await _deliver(store, _finished_run(store, _schedule(store, receiver.url), True))
    assert (refused.delivery, refused.delivery_attempts) == ("failed", 1)
    assert "HTTP 403" in (refused.delivery_detail or "")


async def test_on_change_sends_nothing_when_nothing_changed(store: Store, receiver: Receiver) -> None:
    schedule = _schedule(store, receiver.url, notify="on_change")
    quiet = await _deliver(store, _finished_run(store, schedule, changed=False))
    assert (quiet.delivery, quiet.delivery_detail) == ("not_needed", "nothing changed")
    assert receiver.received == []
    loud = await _deliver(store, _finished_run(store, schedule, changed=True))
    first = await _deliver(store, _finished_run(store, schedule, changed=None))  # a first run: all of it is new
    assert loud.delivery == first.delivery == "delivered" and len(receiver.signed_bodies()) == 2


async def test_the_ssrf_guard_refuses_a_private_receiver_unless_allow_listed(store: Store, receiver: Receiver) -> None:
    firing = _finished_run(store, _schedule(store, receiver.url), changed=True)
    schedules = ScheduleStore(store.database)
    assert schedules.claim_delivery(firing.id)
    await Deliverer(Settings(), store, clock=Sleeps()).deliver(firing)  # no allow-list
    (stored,) = schedules.firings(firing.schedule_id)
    assert stored.delivery == "failed" and "loopback" in (stored.delivery_detail or "")
    assert stored.delivery_attempts == 1 and receiver.received == []


async def test_the_scheduler_delivers_once_a_run_has_ended_without_waiting_for_the_receiver(
    store: Store, receiver: Receiver
) -> None:
    schedule = _schedule(store, receiver.url)
    firing = _finished_run(store, schedule, changed=True)
    receiver.hang = asyncio.Event()
    schedules = ScheduleStore(store.database)
    deliverer = Deliverer(_settings(), store, clock=Sleeps())
    other = Store.from_settings(Settings())
    try:

        async def never(_: ScheduleRecord) -> str:
            raise AssertionError("nothing is due")

        a = Scheduler(schedules, never, clock=ManualClock(), deliver=deliverer.deliver)
        b = Scheduler(ScheduleStore(other.database), never, clock=ManualClock(), deliver=deliverer.deliver)
        await asyncio.gather(a.tick(), b.tick())  # both return while the receiver holds the delivery
        async with asyncio.timeout(10):
            while not receiver.received:
                await asyncio.sleep(0)  # the delivery task reaches the receiver on this loop
        assert schedules.firings(schedule.id)[0].delivery == "sending"
        receiver.hang.set()
        await a.deliveries_done()
        await b.deliveries_done()
    finally:
        other.close()
    assert len(receiver.signed_bodies()) == 1  # one of the two schedulers took it
    assert schedules.firings(schedule.id)[0].delivery == "delivered"
    assert firing.delivery == "pending"


@dataclass
class MailRelay:
    """A minimal SMTP server on loopback that keeps each message it is given."""

    messages: list[tuple[str, list[str], str]] = field(default_factory=list)  # sender, recipients, data
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def reply(line: str) -> None:
            writer.write(f"{line}\r\n".encode())
            await writer.drain()

        await reply("220 relay ready")
        sender, recipients = "", []
        while line := (await reader.readline()).decode().rstrip("\r\n"):
            verb = line.split(" ", 1)[0].upper()
            if verb in ("EHLO", "HELO"):
                await reply("250 relay")
            elif verb == "MAIL":
                sender = line.split(":", 1)[1].strip(" <>")
                await reply("250 ok")
            elif verb == "RCPT":
                recipients.append(line.split(":", 1)[1].strip(" <>"))
                await reply("250 ok")
            elif verb == "DATA":
                await reply("354 go on")
                data = (await reader.readuntil(b"\r\n.\r\n")).decode()
                self.messages.append((sender, recipients, data))
                await reply("250 kept")
            elif verb == "QUIT":
                await reply("221 bye")
                break
            else:
                await reply("250 ok")
        writer.close()


async def test_an_email_goes_out_with_what_changed_when_smtp_is_configured(store: Store) -> None:
    relay = MailRelay()
    server = await asyncio.start_server(relay.handle, "127.0.0.1", 0)
    relay.port = server.sockets[0].getsockname()[1]
    smtp = {"smtp_host": "127.0.0.1", "smtp_port": relay.port, "smtp_starttls": False, "smtp_from": "sleuth@test"}
    spec = ScheduleSpec(question="Widget limits?", every="1h", notify="always", email="reader@example.com")
    record, title = new_schedule(spec, _settings(**smtp), datetime.now(UTC))
    ScheduleStore(store.database).create(record, title)
    firing = _finished_run(store, record, changed=True)
    async with server:
        stored = await _deliver(store, firing, **smtp)
    assert (stored.delivery, stored.delivery_detail, stored.delivery_attempts) == ("delivered", "sent", 1)
    ((sender, recipients, data),) = relay.messages
    assert sender == "sleuth@test" and recipients == ["reader@example.com"]
    assert "Subject: Sleuth: what changed" in data and "Widget limits?" in data
    with pytest.raises(ScheduleError, match="no SMTP server is configured"):
        new_schedule(spec, _settings(), datetime.now(UTC))
    with pytest.raises(ScheduleError, match="is not an e-mail address"):
        new_schedule(
            replace(spec, email="reader@example.com\r\nBcc: x@evil.example"), _settings(**smtp), datetime.now(UTC)
        )
