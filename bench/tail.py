"""Where the time from the final report's last token to the `stop` packet goes (prints figures; not a test).

    .venv/bin/python bench/tail.py [--runs 3] [--latency 1.0]

An in-process probe: the benchmarks' heavy run (`sleuth_testkit.scenarios.BenchModel` behind
`ScriptedLLM(latency_s=...)` on a thread of this process) runs on this process's event loop, every
packet stamped as it is emitted. For timing only, the probe wraps the report stage's two checks where
`sleuth.research.report.final` calls them (citation verification, the claim check). Per run it prints,
in milliseconds after the report's last token was emitted:

  usage        the report call's `usage` packet: the gateway has the provider's usage, which
               litellm hands over after rebuilding the whole response from its chunks
  verify       citation verification, start -> end
  claims       the claim check, start -> end
  report       the `report` packet
  stop         the `stop` packet (what `bench/overhead.py` measures through the CLI's stdout)

Wall figures grow with the machine's load; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_cpu import QUESTION, settings_for  # noqa: E402
from loadavg import load_average  # noqa: E402
from sleuth.research.report import final  # noqa: E402
from sleuth.runs.local import run_request  # noqa: E402
from sleuth.stream.packets import Packet  # noqa: E402
from sleuth.stream.results import ResearchRequest  # noqa: E402
from sleuth_testkit.model import ScriptedLLM  # noqa: E402
from sleuth_testkit.scenarios import BenchModel  # noqa: E402

PARTS = ("usage", "verify start", "verify end", "claims start", "claims end", "report", "stop")


class Stamps:
    """When each watched step started and ended, and when each packet was emitted."""

    def __init__(self) -> None:
        self.packets: list[tuple[float, Packet]] = []
        self.steps: dict[str, float] = {}

    def sink(self, packet: Packet) -> None:
        self.packets.append((time.perf_counter(), packet))


def watch_sync(stamps: list[Stamps], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        stamps[-1].steps[f"{name} start"] = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            stamps[-1].steps[f"{name} end"] = time.perf_counter()

    return timed


def watch_async(stamps: list[Stamps], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    async def timed(*args: Any, **kwargs: Any) -> Any:
        stamps[-1].steps[f"{name} start"] = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            stamps[-1].steps[f"{name} end"] = time.perf_counter()

    return timed


def parts(stamps: Stamps) -> dict[str, float]:
    """Each part's time after the report's last token, in ms."""
    types = [(t, p.obj.type, p.obj) for t, p in stamps.packets]
    last_token = max(t for t, kind, _ in types if kind == "message_delta")
    # the report's own usage: of the report's model calls (the artifact's too), the longest output
    report_usage = max(
        ((t, obj) for t, kind, obj in types if kind == "usage" and getattr(obj, "role", "") == "report"),
        key=lambda item: item[1].output_tokens,
    )
    at = {
        "usage": report_usage[0],
        **stamps.steps,
        "report": next(t for t, kind, _ in types if kind == "report"),
        "stop": next(t for t, kind, _ in types if kind == "stop"),
    }
    return {name: (at[name] - last_token) * 1000 for name in PARTS if name in at}


async def one_run(base_url: str, data_dir: str, stamps: Stamps) -> None:
    result = await run_request(
        ResearchRequest(question=QUESTION, mode="heavy"), settings_for(base_url, data_dir), stamps.sink, checked=False
    )
    if result.status != "completed":
        raise RuntimeError(f"the run ended {result.status}: {result.error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=1.0)
    args = parser.parse_args()
    print(f"load average at start: {load_average()}")
    runs: list[Stamps] = [Stamps()]
    final.verify_report = watch_sync(runs, "verify", final.verify_report)  # type: ignore[assignment]
    final.check_report_claims = watch_async(runs, "claims", final.check_report_claims)  # type: ignore[assignment]
    figures: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as data_dir:
        with ScriptedLLM(BenchModel()) as fast:  # unmeasured: imports, the corpus index, litellm's first call
            asyncio.run(one_run(fast.base_url, data_dir, runs[-1]))
        with ScriptedLLM(BenchModel(), latency_s=args.latency) as llm:
            for _ in range(args.runs):
                runs.append(Stamps())
                asyncio.run(one_run(llm.base_url, data_dir, runs[-1]))
                figures.append(parts(runs[-1]))
                shown = "  ".join(f"{name} {ms:+.0f}" for name, ms in figures[-1].items())
                print(f"  run {len(figures)} (ms after the report's last token): {shown}; load {load_average()}")
    print(f"\nmedian of {args.runs} runs at {args.latency:.1f} s per model call, ms after the report's last token:")
    for name in PARTS:
        values = [f[name] for f in figures if name in f]
        if values:
            print(f"  {name:<14} {statistics.median(values):+7.0f}  (min {min(values):+.0f}, max {max(values):+.0f})")
    print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    main()
