"""Run the real engine against the scripted model and collect what it emits, the way every run in
one process is made (`sleuth.runs.local`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sleuth.config import Settings
from sleuth.core.clock import Clock, SystemClock
from sleuth.research.planning.review import PlanReviewer
from sleuth.runs.local import run_request
from sleuth.stream.packets import Packet, Stop
from sleuth.stream.results import ResearchRequest, ResearchResult
from sleuth_testkit.model import ScriptedLLM


def scripted_settings(llm: ScriptedLLM, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "model": "openai/scripted",
        "api_base": llm.base_url,
        "api_key": "sk-test-secret",
        "llm_backoff_base_s": 0.01,
        "llm_backoff_max_s": 0.05,
        "llm_timeout_s": 30,
        "heartbeat_s": 0.5,
    }
    values.update(overrides)
    return Settings(**values)


@dataclass
class Run:
    packets: list[Packet]
    result: ResearchResult
    times: list[float]  # the run clock's reading when each packet was emitted, by seq

    def of(self, kind: str) -> list[Packet]:
        return [p for p in self.packets if p.obj.type == kind]

    @property
    def stop_reason(self) -> str:
        last = self.packets[-1].obj
        assert isinstance(last, Stop), f"the run ended with {last.type}, not stop"
        return last.reason


async def run_engine(
    settings: Settings,
    request: ResearchRequest | str,
    clock: Clock | None = None,
    reviewer: PlanReviewer | None = None,
) -> Run:
    if isinstance(request, str):
        request = ResearchRequest(question=request)
    run_clock = clock or SystemClock()
    packets: list[Packet] = []
    times: list[float] = []

    def collect(packet: Packet) -> None:
        packets.append(packet)
        times.append(run_clock.now())

    # Unchecked, as a server's engine process runs it: tests reach the engine past a preflight.
    result = await run_request(request, settings, collect, reviewer, checked=False, clock=run_clock)
    return Run(packets=packets, result=result, times=times)
