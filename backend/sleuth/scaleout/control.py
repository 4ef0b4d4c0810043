"""Cancels and plan-review answers from any API server to the worker running the run.

One pub/sub channel that every worker listens to; the worker holding the run acts, the others
ignore it. A cancel is also left as a key, so a worker that takes the run after the message
went out (it was still queued) cancels it at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from sleuth.research.plan_review import PlanAnswer
from sleuth.scaleout.keys import RedisKeys

log = logging.getLogger(__name__)

CANCEL_KEY_TTL_S = 24 * 3600  # longer than any run waits in the queue


@dataclass(frozen=True)
class ControlMessage:
    op: str  # "cancel" | "plan"
    run_id: str
    answer: PlanAnswer | None = None


def encode(message: ControlMessage) -> str:
    body: dict[str, Any] = {"op": message.op, "run_id": message.run_id}
    if message.answer is not None:
        answer = message.answer
        body["answer"] = {
            "approve": answer.approve,
            "steps": list(answer.steps) if answer.steps is not None else None,
            "feedback": answer.feedback,
        }
    return json.dumps(body)


def decode(data: bytes | str) -> ControlMessage:
    body = json.loads(data)
    raw = body.get("answer")
    answer = None
    if raw is not None:
        steps = raw.get("steps")
        steps_tuple = tuple(str(step) for step in steps) if steps is not None else None
        answer = PlanAnswer(approve=bool(raw["approve"]), steps=steps_tuple, feedback=raw.get("feedback"))
    return ControlMessage(op=str(body["op"]), run_id=str(body["run_id"]), answer=answer)


class Control:
    def __init__(self, redis: Redis, keys: RedisKeys) -> None:
        self._redis = redis
        self._keys = keys

    async def cancel(self, run_id: str) -> None:
        await self._redis.set(self._keys.cancel(run_id), "1", ex=CANCEL_KEY_TTL_S)
        await self._redis.publish(self._keys.control, encode(ControlMessage("cancel", run_id)))

    async def cancel_requested(self, run_id: str) -> bool:
        return bool(await self._redis.exists(self._keys.cancel(run_id)))

    async def claim_plan_answer(self, run_id: str, review_seq: int) -> bool:
        """The first answer to this review wins, whichever server it reaches."""
        key = self._keys.plan_answer(run_id, review_seq)
        return bool(await self._redis.set(key, "1", nx=True, ex=CANCEL_KEY_TTL_S))

    async def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        await self._redis.publish(self._keys.control, encode(ControlMessage("plan", run_id, answer)))

    async def listen(self, handle: Callable[[ControlMessage], Awaitable[None]], subscribed: asyncio.Event) -> None:
        """Hand every message to `handle` until cancelled; `subscribed` is set once messages can arrive."""
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(self._keys.control)
        subscribed.set()
        try:
            while True:
                message = await pubsub.get_message(timeout=None)
                if message is None or message.get("type") != "message":
                    continue
                try:
                    await handle(decode(message["data"]))
                except Exception:  # one bad message must not deafen the worker
                    log.exception("control message not handled")
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]
