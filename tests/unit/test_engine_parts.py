import asyncio
import random

from sleuth.llm.retry import backoff_delay, is_transient
from sleuth.research.planning.clarify import parse_questions
from sleuth.research.planning.plan import parse_plan
from sleuth.research.state import OnceCache


def test_plan_parsing_caps_steps_and_ignores_prose() -> None:
    text = "Here is the plan:\n1. First\n2) Second step\n- Third\n**4. Fourth**\nStep 5: Fifth\n6. Sixth\n7. Seventh"
    assert parse_plan(text, 6) == ["First", "Second step", "Third", "Fourth", "Fifth", "Sixth"]
    assert parse_plan("I cannot help with that.", 6) == []


def test_questions_parsing() -> None:
    assert parse_questions("Some intro.\n1. Which version?\n2. Which OS?") == ["Which version?", "Which OS?"]
    assert parse_questions("Do you mean CPython? Or PyPy?") == ["Do you mean CPython?", "Or PyPy?"]


def test_backoff_grows_and_is_capped() -> None:
    rng = random.Random(1)
    delays = [backoff_delay(a, 0.5, 4.0, rng) for a in range(6)]
    assert 0.25 <= delays[0] <= 0.5 and 2.0 <= delays[3] <= 4.0 and delays[5] <= 4.0


def test_transient_classification() -> None:
    class Limited(Exception):
        status_code = 429

    class BadRequest(Exception):
        status_code = 400

    assert is_transient(Limited()) and is_transient(TimeoutError()) and is_transient(ConnectionResetError())
    assert not is_transient(BadRequest()) and not is_transient(ValueError("x"))


async def test_once_cache_shares_in_flight_work_and_caches_failures() -> None:
    cache: OnceCache[str, int] = OnceCache()
    calls = {"n": 0}
    gate = asyncio.Event()

    async def compute() -> int:
        calls["n"] += 1
        await gate.wait()
        return 42

    first = asyncio.create_task(cache.get("k", compute))
    second = asyncio.create_task(cache.get("k", compute))
    await asyncio.sleep(0)
    gate.set()
    assert await first == await second == 42 and calls["n"] == 1

    async def boom() -> int:
        calls["n"] += 1
        raise ValueError("down")

    for _ in range(2):
        try:
            await cache.get("bad", boom)
        except ValueError:
            pass
    assert calls["n"] == 2  # the failure was not retried


async def test_once_cache_recomputes_after_the_owner_is_cancelled() -> None:
    cache: OnceCache[str, int] = OnceCache()

    async def hang() -> int:
        await asyncio.Event().wait()
        return 0

    async def quick() -> int:
        return 5

    owner = asyncio.create_task(cache.get("k", hang))
    await asyncio.sleep(0)
    waiter = asyncio.create_task(cache.get("k", quick))
    await asyncio.sleep(0)
    owner.cancel()
    assert await waiter == 5
