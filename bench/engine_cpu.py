"""The engine's CPU per research run, and where it goes (prints figures; not a test).

    .venv/bin/python bench/engine_cpu.py [--runs 5] [--profile]

Runs the benchmarks' heavy run (`sleuth_testkit.scenarios.BenchModel`: 16 model calls, 6 searches
over the built-in corpus, 3 lanes, one token per streamed chunk) in this process, on one event loop,
with the scripted model in its own process at no latency, so only the engine's CPU is counted. Prints
the process CPU (user + sys, every thread) per run after one unmeasured run that loads what a first
run loads. `--profile` adds a cProfile of the measured runs (the event loop's thread: work sent to
threads is in the CPU figure, not in the profile): Sleuth's share (its own functions and what they
call outside litellm, the OpenAI SDK and httpx), the time under litellm's entry points, the time by
the package that spends it itself, and the top functions; the profiler inflates the figures, so
read the shares.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import ScriptedProcess  # noqa: E402
from loadavg import load_average  # noqa: E402
from sleuth.config import Settings  # noqa: E402
from sleuth.runs.local import run_request  # noqa: E402
from sleuth.stream.packets import Packet  # noqa: E402
from sleuth.stream.results import ResearchRequest  # noqa: E402
from sleuth_testkit.scenarios import BenchModel  # noqa: E402

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
PACKAGES = ("sleuth", "litellm", "openai", "tiktoken", "httpx", "httpcore", "pydantic", "asyncio", "json", "re")


def settings_for(base_url: str, data_dir: str) -> Settings:
    return Settings(
        model="openai/bench",
        api_base=base_url,
        api_key="sk-bench",
        data_dir=Path(data_dir),
        search="local",
        max_parallel_agents=3,
        clarify=True,
    )


async def one_run(settings: Settings) -> int:
    packets: list[Packet] = []
    result = await run_request(
        ResearchRequest(question=QUESTION, mode="heavy"), settings, packets.append, checked=False
    )
    if result.status != "completed":
        raise RuntimeError(f"the run ended {result.status}: {result.error}")
    return len(packets)


def package_of(filename: str) -> str:
    parts = Path(filename).parts
    for name in PACKAGES:
        if name in parts or f"{name}.py" in parts:
            return name
    if filename.startswith(("~", "<")):
        return "C functions"
    return "other"


CLIENT = ("litellm", "openai", "httpx", "httpcore", "anyio")  # the model client, below the gateway


def sleuth_share(stats: pstats.Stats) -> tuple[float, float]:
    """(time in Sleuth's own functions, time in what they call directly outside the model client,
    with all it calls in turn): Sleuth's share of the profile."""
    own = called = 0.0
    for (filename, _, _), (_, _, tottime, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "/sleuth/" in filename:
            own += tottime
        elif not any(name in filename for name in CLIENT):
            called += sum(row[3] for caller, row in callers.items() if "/sleuth/" in caller[0])
    return own, called


def print_profile(profile: cProfile.Profile, runs: int) -> None:
    stats = pstats.Stats(profile)
    own, called = sleuth_share(stats)
    print(
        f"\nSleuth's share, per run: its own functions {own / runs:.3f} s + what they call outside the model "
        f"client {called / runs:.3f} s = {(own + called) / runs:.3f} s"
    )
    by_package: dict[str, float] = defaultdict(float)
    total = 0.0
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        by_package[package_of(filename)] += tottime
        total += tottime
    litellm_calls = sum(
        row[3]
        for (filename, _, name), row in stats.stats.items()  # type: ignore[attr-defined]
        if "litellm" in filename and name in ("acompletion", "__anext__", "aclose")
    )
    print(
        f"\nunder litellm's entry points (acompletion, the stream's __anext__ and aclose): "
        f"{litellm_calls / runs:.3f} s per run; the rest (Sleuth, asyncio, the corpus): "
        f"{(total - litellm_calls) / runs:.3f} s per run"
    )
    print(f"\nprofiled time by the package that spends it (own time, per run; total {total / runs:.3f} s):")
    for name, seconds in sorted(by_package.items(), key=lambda item: -item[1]):
        print(f"  {name:<14} {seconds / runs:7.3f} s  {seconds / total:6.1%}")
    print("\ntop functions by own time:")
    stats.sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {load_average()}")
    cpu: list[float] = []
    profile = cProfile.Profile(time.process_time) if args.profile else None  # CPU, not waits
    with tempfile.TemporaryDirectory() as data_dir, ScriptedProcess(BenchModel()) as base_url:  # type: ignore[arg-type]
        settings = settings_for(base_url, data_dir)
        asyncio.run(one_run(settings))  # unmeasured: imports, the corpus index, litellm's first call
        for _ in range(args.runs):
            started = time.process_time()
            if profile is not None:
                profile.enable()
            packets = asyncio.run(one_run(settings))
            if profile is not None:
                profile.disable()
            cpu.append(time.process_time() - started)
            print(f"  run {len(cpu)}: {cpu[-1]:.3f} s CPU, {packets} packets, load {load_average()}", file=sys.stderr)
    print(
        f"engine CPU per heavy run (user + sys, {args.runs} runs): min {min(cpu):.3f} / "
        f"median {statistics.median(cpu):.3f} / max {max(cpu):.3f} s"
    )
    if profile is not None:
        print_profile(profile, args.runs)
    print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    main()
