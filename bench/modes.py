"""Light vs heavy on the same question: model calls, tokens and time, with the offline model and a scripted one.

    .venv/bin/python bench/modes.py [--question "..."] [--runs 3]

The scripted model (sleuth_testkit) answers like a sensible LLM at every step with a fixed
per-call latency, so time reflects the run's critical path rather than this machine's speed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from collections import Counter
from pathlib import Path

from sleuth.config import Settings
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import Run, run_engine, scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import SixStepModel

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def figures(run: Run) -> tuple[int, int, float]:
    usage = run.of("usage")
    tokens = sum(p.obj.input_tokens + p.obj.output_tokens for p in usage)  # type: ignore[union-attr]
    return len(usage), tokens, run.result.elapsed_s


async def measure(settings: Settings, question: str, mode: str, runs: int) -> tuple[int, int, float, str]:
    results = []
    roles: Counter[str] = Counter()
    for _ in range(runs):
        run = await run_engine(settings, ResearchRequest(question=question, mode=mode, clarify=False))  # type: ignore[arg-type]
        results.append(figures(run))
        roles = Counter(p.obj.role for p in run.of("usage"))  # type: ignore[union-attr]
    calls, tokens, _ = results[-1]
    return (
        calls,
        tokens,
        statistics.median(r[2] for r in results),
        ", ".join(f"{k} {v}" for k, v in sorted(roles.items())),
    )


def report(label: str, light: tuple[int, int, float, str], heavy: tuple[int, int, float, str]) -> None:
    print(f"\n{label}")
    print(f"  {'mode':6} {'calls':>6} {'tokens':>8} {'time s':>7}  calls by role")
    for name, row in (("light", light), ("heavy", heavy)):
        print(f"  {name:6} {row[0]:>6} {row[1]:>8} {row[2]:>7.2f}  {row[3]}")
    ratios = (light[0] / heavy[0], light[1] / heavy[1], light[2] / heavy[2])
    print("  light / heavy: calls {:.2f}, tokens {:.2f}, time {:.2f}".format(*ratios))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--runs", type=int, default=3, help="runs per mode; time is the median")
    parser.add_argument("--latency", type=float, default=0.2, help="scripted model: seconds per call")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        offline = Settings(data_dir=Path(data))
        await measure(offline, args.question, "heavy", 1)  # warm-up: imports, corpus index
        report(
            "offline model",
            await measure(offline, args.question, "light", args.runs),
            await measure(offline, args.question, "heavy", args.runs),
        )
        with ScriptedLLM(SixStepModel(latency_s=args.latency)) as llm:
            scripted = scripted_settings(llm, data_dir=Path(data))
            await measure(scripted, args.question, "light", 1)  # warm-up: litellm's first call is slow
            report(
                f"scripted model ({args.latency:.2f} s per call)",
                await measure(scripted, args.question, "light", args.runs),
                await measure(scripted, args.question, "heavy", args.runs),
            )


if __name__ == "__main__":
    asyncio.run(main())
