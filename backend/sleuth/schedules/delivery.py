"""Delivering what a schedule's run found: a webhook POST of the diff and the report's URL.

The body is JSON; `X-Sleuth-Signature: sha256=<hex>` is the HMAC-SHA256 of exactly those bytes with
the schedule's secret, so a receiver can check it came from this server unchanged. The URL passes
the SSRF guard on every attempt (private hosts only when `SLEUTH_WEBHOOK_ALLOW_HOSTS` allows them)
and the connection goes to the address the guard vetted. Attempts back off exponentially on the
injected clock; 2xx is delivered, a 4xx other than 408/429 fails at once (the receiver refuses it),
anything else is tried again. The outcome is recorded on the firing. Deliveries run after the run
has ended, in the background: none holds up a run or the scheduler.

With an `email` address (and `SLEUTH_SMTP_HOST`), the same delivery also sends an e-mail through
smtplib: the question, the report's "What changed" section and its URL; tried again like the webhook.

`notify`: `always` sends after every run, `on_change` only when the diff is not empty, `never` nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import random
import smtplib
import ssl
from collections.abc import Awaitable, Callable
from email.message import EmailMessage
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


class _Retry(Exception):
    """This attempt failed in a way a later one may not."""


def send_mail(settings: Settings, message: EmailMessage) -> None:
    """One e-mail through the configured SMTP server (blocking: call it on a thread)."""
    with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=settings.webhook_timeout_s) as smtp:
        if settings.smtp_starttls:
            smtp.starttls(context=ssl.create_default_context())
        if settings.smtp_username:
            password = settings.smtp_password.get_secret_value() if settings.smtp_password else ""
            smtp.login(settings.smtp_username, password)
        smtp.send_message(message)


def changes_section(markdown: str) -> str:
    """The report's opening "What changed since …" section, if it has one."""
    if not markdown.startswith("## What changed since"):
        return ""
    return markdown.split("\n## ", 1)[0].strip()


def email_message(settings: Settings, schedule: ScheduleRecord, payload: dict[str, Any], markdown: str) -> EmailMessage:
    message = EmailMessage()
    changed_now = changed(payload.get("changes"))
    message["Subject"] = f"Sleuth: {'what changed' if changed_now else 'no change'} — {schedule.question[:80]}"
    message["From"] = settings.smtp_from
    message["To"] = schedule.email
    lines = [schedule.question, ""]
    section = changes_section(markdown)
    lines += [section, ""] if section else []
    if payload.get("report_url"):
        lines.append(f"The report: {payload['report_url']}")
    message.set_content("\n".join(lines))
    return message


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
        if schedule is None or not (schedule.webhook_url or schedule.email):
            return "not_needed", "the schedule has no webhook or e-mail now", 0
        report = await asyncio.to_thread(self.schedules.run_report, firing.run_id or "")
        changes = report["changes"] if report else None
        if schedule.notify == "never" or (schedule.notify == "on_change" and not changed(changes)):
            return "not_needed", "nothing changed" if schedule.notify == "on_change" else None, 0
        payload = self.payload(schedule, firing, report)
        outcomes: list[tuple[str, tuple[Delivery, str | None, int]]] = []
        if schedule.webhook_url and schedule.webhook_secret:
            body = json.dumps(payload, separators=(",", ":")).encode()
            outcomes.append(("webhook", await self._post(schedule.webhook_url, schedule.webhook_secret, body)))
        if schedule.email:
            message = email_message(self.settings, schedule, payload, report["markdown"] if report else "")
            outcomes.append(("e-mail", await self._retried(lambda: self._send_mail(message))))
        if not outcomes:
            return "not_needed", "the schedule has no webhook or e-mail now", 0
        failed = any(outcome == "failed" for _, (outcome, _, _) in outcomes)
        detail = "; ".join(f"{name}: {text}" for name, (_, text, _) in outcomes) if len(outcomes) > 1 else None
        if detail is None:
            detail = outcomes[0][1][1]
        return ("failed" if failed else "delivered"), detail, max(attempts for _, (_, _, attempts) in outcomes)

    async def _retried(self, attempt: Callable[[], Awaitable[str]]) -> tuple[Delivery, str | None, int]:
        """`attempt` until it returns (what to record), with backoff; `_Refused` ends at once."""
        problem = "not attempted"
        for number in range(self.settings.webhook_attempts):
            if number:
                await self._clock.sleep(backoff_delay(number - 1, BACKOFF_BASE_S, BACKOFF_CAP_S, self._rng))
            try:
                return "delivered", await attempt(), number + 1
            except _Refused as exc:
                return "failed", str(exc), number + 1
            except _Retry as exc:
                problem = str(exc)
        return "failed", problem, self.settings.webhook_attempts

    async def _send_mail(self, message: EmailMessage) -> str:
        settings = self.settings
        try:
            await asyncio.to_thread(send_mail, settings, message)
        except smtplib.SMTPRecipientsRefused:
            raise _Refused("the SMTP server refused the recipient") from None
        except smtplib.SMTPAuthenticationError:
            raise _Refused("the SMTP server refused the login (SLEUTH_SMTP_USERNAME, SLEUTH_SMTP_PASSWORD)") from None
        except (smtplib.SMTPException, OSError) as exc:
            raise _Retry(f"{type(exc).__name__} sending the e-mail") from None
        return "sent"

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
        # trust_env=False: a proxy from the environment would connect for us and defeat the vetted address.
        async with httpx.AsyncClient(transport=self._transport, timeout=timeout, trust_env=False) as client:

            async def attempt() -> str:
                try:
                    status = await self._attempt(client, url, headers, body)
                except SourceBlocked as exc:  # the guard refuses the address: so will it next time
                    raise _Refused(str(exc)) from None
                except ToolError as exc:  # the host did not resolve
                    raise _Retry(str(exc)) from None
                except httpx.HTTPError as exc:
                    raise _Retry(f"{type(exc).__name__} posting to the webhook") from None
                if not 200 <= status < 300:
                    raise _Retry(f"HTTP {status}")
                return f"HTTP {status}"

            return await self._retried(attempt)

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
