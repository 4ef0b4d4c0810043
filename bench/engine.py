"""Engine benchmark (prints figures; not a test).

With a scripted model at a fixed latency per LLM call and a fixed latency per search, prints:
  (a) wall time / critical-path time of a full heavy run (target <= 1.05), and
  (b) the speed-up of 3 lanes over 1 lane for the same 6 research tasks (target >= 2.8).

Run: .venv/bin/python bench/engine.py [--llm-latency 1.0] [--search-latency 0.5]

Each model call also carries a fixed cost that no latency setting removes (litellm, the OpenAI SDK
and HTTP on loopback); the benchmark measures it with a zero-latency run and prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import tempfile
import time
from pathlib import Path

from sleuth.config import Settings
from sleuth.runs.local import run_request
from sleuth.stream.documents import Document
from sleuth.stream.packets import Packet
from sleuth.stream.results import ResearchRequest
from sleuth.tools.local.providers import build_local_tools
from sleuth.tools.toolbox import Toolbox
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel

# Larger stream chunks than the tests use: the benchmark measures the engine, not chunk parsing.
CHUNK = 64

TASKS = [
    "descriptor protocol __get__ __set__",
    "__getattr__ fallback attribute lookup",
    "__getattribute__ data descriptors",
    "property builtin descriptor",
    "__slots__ descriptors",
    "classmethod staticmethod descriptors",
]


class SlowSearch:
    """The real local provider behind a fixed network-like latency."""

    def __init__(self, inner, latency: float) -> None:
        self.inner, self.latency, self.name = inner, latency, "local"

    async def search(self, query: str, *, limit: int) -> list[Document]:
        await asyncio.sleep(self.latency)
        return await self.inner.search(query, limit=limit)


class Delayed(ResearchModel):
    def __init__(self, latency: float, lanes: int) -> None:
        super().__init__(tasks_per_cycle=[TASKS[i : i + lanes] for i in range(0, len(TASKS), lanes)], use_think=False)
        self.latency = latency

    def __call__(self, body):
        reply = super().__call__(body)
        reply.delay_s = self.latency
        reply.chunk_size = CHUNK
        return reply


def _serve(model: ResearchModel, ports: multiprocessing.Queue[int], done: multiprocessing.Event) -> None:
    with ScriptedLLM(model) as llm:
        ports.put(llm.port)
        done.wait()


class ScriptedProcess:
    """The scripted model in its own process, so it does not share the engine's GIL."""

    def __init__(self, model: ResearchModel) -> None:
        context = multiprocessing.get_context("fork")
        self._ports = context.Queue()
        self._done = context.Event()
        self._process = context.Process(target=_serve, args=(model, self._ports, self._done), daemon=True)

    def __enter__(self) -> str:
        self._process.start()
        return f"http://127.0.0.1:{self._ports.get(timeout=30)}/v1"

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._process.join(timeout=10)


async def timed_run(lanes: int, llm_latency: float, search_latency: float, data_dir: str) -> tuple[float, float, int]:
    """(wall seconds, seconds spent in research lanes, orchestrator cycles with lanes)."""
    model = Delayed(llm_latency, lanes)
    with ScriptedProcess(model) as base_url:
        settings = Settings(
            model="openai/bench",
            api_base=base_url,
            api_key="sk-bench",
            data_dir=Path(data_dir),
            max_parallel_agents=lanes,
            max_cycles=len(model.tasks_per_cycle) + 1,
            clarify=True,
        )
        search, reader = build_local_tools(settings)
        await search.search("warm up the index", limit=1)
        toolbox = Toolbox(providers=[SlowSearch(search, search_latency)], readers=[reader])
        stamps: list[tuple[float, Packet]] = []
        started = time.perf_counter()
        await run_request(
            ResearchRequest(question="How do descriptors and __getattr__ interact?"),
            settings,
            lambda p: stamps.append((time.perf_counter(), p)),
            checked=False,
            toolbox=toolbox,
        )
        wall = time.perf_counter() - started
    in_lanes = 0.0
    branch_turns = {p.placement.turn_index for _, p in stamps if p.obj.type == "top_level_branching"}
    for turn in branch_turns:
        times = [t for t, p in stamps if p.placement.turn_index == turn]
        in_lanes += max(times) - min(times)
    return wall, in_lanes, len(branch_turns)


def critical_path(llm: float, search: float, cycles: int) -> float:
    """Sequential latency a perfect engine cannot avoid for the scripted run.

    clarify + plan + (cycles + 1) orchestrator calls + final report, and per cycle the slowest
    lane: 3 agent turns + 1 report call + 1 search (an agent's queries run concurrently).
    """
    return llm * (1 + 1 + (cycles + 1) + 1) + cycles * (4 * llm + search)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--llm-latency", type=float, default=1.0)
    parser.add_argument("--search-latency", type=float, default=0.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        # one unmeasured run first: importing litellm and its first call cost seconds once per process
        asyncio.run(timed_run(3, 0.0, 0.0, data_dir))
        overhead, _, _ = asyncio.run(timed_run(3, 0.0, 0.0, data_dir))
        wall3, lanes3, cycles3 = asyncio.run(timed_run(3, args.llm_latency, args.search_latency, data_dir))
        wall1, lanes1, cycles1 = asyncio.run(timed_run(1, args.llm_latency, args.search_latency, data_dir))
    ideal = critical_path(args.llm_latency, args.search_latency, cycles3)
    print(f"latency per LLM call {args.llm_latency:.2f}s, per search {args.search_latency:.2f}s, 6 research tasks")
    print(f"fixed cost of a whole heavy run at zero latency (16 sequential model calls): {overhead:.2f}s")
    print(
        f"(a) heavy run, 3 lanes: wall {wall3:.2f}s / critical path {ideal:.2f}s = {wall3 / ideal:.3f}"
        "  (target <= 1.05)"
    )
    print(
        f"(b) time in research lanes: 1 lane {lanes1:.2f}s ({cycles1} cycles)"
        f" / 3 lanes {lanes3:.2f}s ({cycles3} cycles)"
        f" = {lanes1 / lanes3:.2f}x  (target >= 2.8)"
    )
    print(
        f"    whole run: 1 lane {wall1:.2f}s / 3 lanes {wall3:.2f}s = {wall1 / wall3:.2f}x"
        " (includes the extra orchestrator turns of 1 lane)"
    )


if __name__ == "__main__":
    main()
