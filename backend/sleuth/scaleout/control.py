"""Cancels and plan-review answers from any API server to the worker running the run.

One pub/sub channel that every worker listens to; the worker holding the run acts, the others
ignore it. Pub/sub delivers at most once (a message sent while a listener reconnects is lost), so
each request is also left as a key: a cancel, for a worker that takes the run after the message
went out (it was still queued) or missed it; a plan answer, under the key that claims the review.
Workers check those keys for the runs they hold now and then (`pending`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sleuth.core import heavy
from sleuth.research.planning.review import PlanAnswer
from sleuth.scaleout.keys import RedisKeys

log = logging.getLogger(__name__)

Handler = Callable[["ControlMessage"], Awaitable[None]]
CatchUp = Callable[[], Awaitable[None]]

CANCEL_KEY_TTL_S = 24 * 3600  # longer than any run waits in the queue
RECONNECT_S = 1.0  # between attempts to subscribe again after Redis went away
STOP_CHECK_S = 1.0  # the longest wait for a message before the listener checks whether to stop


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
    def __init__(self, redis: heavy.Redis, keys: RedisKeys) -> None:
        self._redis = redis
        self._keys = keys

    async def cancel(self, run_id: str) -> None:
        await self._redis.set(self._keys.cancel(run_id), "1", ex=CANCEL_KEY_TTL_S)
        await self._redis.publish(self._keys.control, encode(ControlMessage("cancel", run_id)))

    async def cancel_requested(self, run_id: str) -> bool:
        return bool(await self._redis.exists(self._keys.cancel(run_id)))

    async def claim_plan_answer(self, run_id: str, review_seq: int, answer: PlanAnswer) -> bool:
        """The first answer to this review wins, whichever server it reaches; it is kept under the
        claim, for a worker that misses the message."""
        key = self._keys.plan_answer(run_id, review_seq)
        body = encode(ControlMessage("plan", run_id, answer))
        return bool(await self._redis.set(key, body, nx=True, ex=CANCEL_KEY_TTL_S))

    async def answer_plan(self, run_id: str, answer: PlanAnswer) -> None:
        await self._redis.publish(self._keys.control, encode(ControlMessage("plan", run_id, answer)))

    async def pending(self, cancels: Iterable[str], reviews: dict[str, int]) -> list[ControlMessage]:
        """What was asked of these runs, whether or not its message arrived: cancels of `cancels`,
        and answers to the open review of each run in `reviews` (run id -> the review's seq)."""
        cancel_ids = list(cancels)
        review_ids = list(reviews)
        if not cancel_ids and not review_ids:
            return []
        pipe = self._redis.pipeline(transaction=False)
        for run_id in cancel_ids:
            pipe.exists(self._keys.cancel(run_id))
        for run_id in review_ids:
            pipe.get(self._keys.plan_answer(run_id, reviews[run_id]))
        results = await pipe.execute()
        found = [ControlMessage("cancel", run_id) for run_id, hit in zip(cancel_ids, results, strict=False) if hit]
        found += [decode(body) for body in results[len(cancel_ids) :] if body]
        return found

    async def listen(
        self, handle: Handler, subscribed: asyncio.Event, stop: asyncio.Event, catch_up: CatchUp | None = None
    ) -> None:
        """Hand every message to `handle` until `stop` is set; `subscribed` is set once messages can
        arrive. Subscribes again whenever Redis goes away, and then calls `catch_up`: what was sent
        while this listener was not subscribed was left as keys (see `pending`)."""
        while not stop.is_set():
            try:
                await self._listen_once(handle, subscribed, stop, catch_up)
            except heavy.RedisError:
                log.warning("lost the control channel; subscribing again in %.0f s", RECONNECT_S)
                await asyncio.sleep(RECONNECT_S)

    async def _listen_once(
        self, handle: Handler, subscribed: asyncio.Event, stop: asyncio.Event, catch_up: CatchUp | None
    ) -> None:
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self._keys.control)
            subscribed.set()
            # redis-py also reconnects and resubscribes by itself, silently, when a read fails.
            reconnects = _Reconnects(seen=True)
            if pubsub.connection is not None:
                pubsub.connection.register_connect_callback(reconnects.connected)
            while not stop.is_set():
                if reconnects.seen and catch_up is not None:
                    reconnects.seen = False
                    await _catching_up(catch_up)
                # Not an unbounded wait: `stop` is looked at between waits, should a cancel be lost.
                message = await pubsub.get_message(timeout=STOP_CHECK_S)
                if message is None or message.get("type") != "message":
                    continue
                try:
                    await handle(decode(message["data"]))
                except Exception:  # one bad message must not deafen the worker
                    log.exception("control message not handled")
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]  # redis leaves it unannotated


@dataclass
class _Reconnects:
    """Whether the listener's connection was made again since it last caught up."""

    seen: bool

    def connected(self, connection: object) -> None:  # redis-py keeps only a weak reference to this method
        self.seen = True


async def _catching_up(catch_up: CatchUp) -> None:
    try:
        await catch_up()
    except heavy.RedisError:
        raise  # the listener subscribes again, and catches up then
    except Exception:  # a bug there must not deafen the worker; the periodic check tries again
        log.exception("catching up on control messages failed")
