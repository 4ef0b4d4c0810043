"""Delivering what a schedule's run found: a webhook POST of the diff and the report's URL.

The body is JSON; `X-Sleuth-Signature: sha256=<hex>` is the HMAC-SHA256 of exactly those bytes with
the schedule's secret, so a receiver can check it came from this server unchanged. The URL passes
the SSRF guard on every attempt (private hosts only when `SLEUTH_WEBHOOK_ALLOW_HOSTS` allows them)
and the connection goes to the address the guard vetted. Attempts back off exponentially on the
injected clock; 2xx is delivered, a 4xx other than 408/429 fails at once (the receiver refuses it),
anything else is tried again. The outcome is recorded on the firing. Deliveries run after the run
has ended, in the background: none holds up a run or the scheduler.

`notify`: `always` sends after every run, `on_change` only when the diff is not empty, `never` nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import random
from typing import Any

import httpx

from sleuth.config import Settings
from sleuth.core.clock import Clock, SystemClock
from sleuth.llm.retry import backoff_delay
from sleuth.store.schedules import Delivery, FiringRecord, ScheduleRecord, ScheduleStore
from sleuth.store.store import Store
from sleuth.tools.base import SourceBlocked, ToolError
from sleuth.tools.web.ssrf import AllowList, Resolver, SsrfGuard, system_resolver

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Sleuth-Signature"
EVENT = "schedule.run"
BACKOFF_BASE_S = 2.0
BACKOFF_CAP_S = 300.0
_FINAL_4XX = frozenset(range(400, 500)) - {408, 425, 429}


def signature(secret: str, body: bytes) -> str:
    """The header value a receiver recomputes: `sha256=` and the hex HMAC of the body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def changed(changes: dict[str, Any] | None) -> bool:
    """Whether a report's `changes` says anything is different (a first run has none: it is all new)."""
    return changes is None or bool(changes.get("changed"))


class _Refused(Exception):
    """The receiver answered in a way another attempt cannot change."""


class Deliverer:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        clock: Clock | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        resolver: Resolver = system_resolver,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self.schedules = ScheduleStore(store.database)
        self._clock = clock or SystemClock()
        self._transport = transport
        self._guard = SsrfGuard(allow=AllowList.parse(settings.webhook_allow_hosts), resolver=resolver)
        self._rng = rng or random.Random()

    async def deliver(self, firing: FiringRecord) -> Delivery:
        """Deliver a claimed firing (`ScheduleStore.claim_delivery`) and record the outcome."""
        outcome, detail, attempts = await self._outcome(firing)
        await asyncio.to_thread(self.schedules.finish_delivery, firing.id, outcome, detail, attempts)
        log.info("schedule %s run %s delivery: %s %s", firing.schedule_id, firing.run_id, outcome, detail or "")
        return outcome

    async def _outcome(self, firing: FiringRecord) -> tuple[Delivery, str | None, int]:
        schedule = await asyncio.to_thread(self.schedules.get, firing.schedule_id)
        if schedule is None or not schedule.webhook_url or not schedule.webhook_secret:
            return "not_needed", "the schedule has no webhook now", 0
        report = await asyncio.to_thread(self.schedules.run_report, firing.run_id or "")
        changes = report["changes"] if report else None
        if schedule.notify == "never" or (schedule.notify == "on_change" and not changed(changes)):
            return "not_needed", "nothing changed" if schedule.notify == "on_change" else None, 0
        body = json.dumps(self.payload(schedule, firing, report), separators=(",", ":")).encode()
        return await self._post(schedule.webhook_url, schedule.webhook_secret, body)

    def payload(self, schedule: ScheduleRecord, firing: FiringRecord, report: dict[str, Any] | None) -> dict[str, Any]:
        report_id = report["id"] if report else None
        base = self.settings.public_url.rstrip("/")
        return {
            "event": EVENT,
            "schedule_id": schedule.id,
            "question": schedule.question,
            "session_id": schedule.session_id,
            "run_id": firing.run_id,
            "due_at": firing.due_at,
            "report_id": report_id,
            "report_url": f"{base}/api/reports/{report_id}" if report_id else None,
            "status": report["status"] if report else "error",
            "changes": report["changes"] if report else None,
        }

    async def _post(self, url: str, secret: str, body: bytes) -> tuple[Delivery, str | None, int]:
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature(secret, body),
            "X-Sleuth-Event": EVENT,
        }
        timeout = httpx.Timeout(self.settings.webhook_timeout_s)
        problem = "not attempted"
        attempts = 0
        # trust_env=False: a proxy from the environment would connect for us and defeat the vetted address.
        async with httpx.AsyncClient(transport=self._transport, timeout=timeout, trust_env=False) as client:
            for attempt in range(self.settings.webhook_attempts):
                if attempt:
                    await self._clock.sleep(backoff_delay(attempt - 1, BACKOFF_BASE_S, BACKOFF_CAP_S, self._rng))
                attempts = attempt + 1
                try:
                    status = await self._attempt(client, url, headers, body)
                except _Refused as exc:
                    return "failed", str(exc), attempts
                except SourceBlocked as exc:  # the guard refuses the address: so will it next time
                    return "failed", str(exc), attempts
                except ToolError as exc:  # the host did not resolve
                    problem = str(exc)
                    continue
                except httpx.HTTPError as exc:
                    problem = f"{type(exc).__name__} posting to the webhook"
                    continue
                if 200 <= status < 300:
                    return "delivered", f"HTTP {status}", attempts
                problem = f"HTTP {status}"
        return "failed", problem, attempts

    async def _attempt(self, client: httpx.AsyncClient, url: str, headers: dict[str, str], body: bytes) -> int:
        target = await self._guard.vet(url)
        request = client.build_request(
            "POST",
            target.pinned_url,
            headers={**headers, "Host": target.host_header},
            content=body,
            extensions=target.tls_extensions,
        )
        response = await client.send(request)
        await response.aclose()
        if response.status_code in _FINAL_4XX:
            raise _Refused(f"HTTP {response.status_code}: the receiver refused the delivery")
        return response.status_code
