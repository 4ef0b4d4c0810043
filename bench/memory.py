"""Memory of an idle `sleuth serve` and of each further live run (prints figures; not a test).

    .venv/bin/python bench/memory.py [--runs 10] [--idle-s 5]

Starts the test kit's scripted model on a thread of this process and a `sleuth serve` with its
default engine processes, waits until /api/health says every engine is warm, lets the server idle
for --idle-s, and prints the RSS and PSS (proportional set size: shared pages split between the
processes that map them) of the API process and of each engine process, and their sums. Then it
starts --runs runs that stay live (the orchestrator's second turn never answers), prints the memory
per live run (the sum's growth over the idle sum, divided by the runs), and cancels them.

Targets (issue 27, point 2): the API process <= 150 MiB RSS idle; the whole server <= 550 MB idle.
Memory does not depend on the load much, but it is printed beside the figures all the same.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.net import free_port
from sleuth_testkit.scenarios import HangingOrchestrator

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402
from server import engine_pids, start_server, wait_warm  # noqa: E402

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
MIB = 1024 * 1024
API_TARGET_MIB = 150
TOTAL_TARGET_MB = 550


def memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in KiB, from /proc/PID/smaps_rollup."""
    rss = pss = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1])
        elif line.startswith("Pss:"):
            pss = int(line.split()[1])
    return rss, pss


def snapshot(server_pid: int) -> dict[str, tuple[int, int]]:
    processes = {"API process": server_pid}
    processes.update({f"engine {i}": pid for i, pid in enumerate(engine_pids(server_pid), 1)})
    return {name: memory_kib(pid) for name, pid in processes.items()}


def total(figures: dict[str, tuple[int, int]]) -> tuple[int, int]:
    return sum(rss for rss, _ in figures.values()), sum(pss for _, pss in figures.values())


def mib(kib: int) -> str:
    return f"{kib * 1024 / MIB:7.1f} MiB"


def mb(kib: int) -> str:
    return f"{kib * 1024 / 1e6:7.1f} MB"


async def hold_runs(client: httpx.AsyncClient, llm: ScriptedLLM, runs: int) -> list[str]:
    """Start `runs` runs and return once each is waiting on its orchestrator's hung second turn."""
    run_ids = []
    for _ in range(runs):
        response = await client.post("/api/research", json={"question": QUESTION, "clarify": False})
        response.raise_for_status()
        run_ids.append(str(response.json()["run_id"]))
    deadline = time.monotonic() + 300
    while len(llm.requests_for("orchestrator")) < 2 * runs:  # another process's progress: bounded poll
        if time.monotonic() > deadline:
            raise RuntimeError("the runs did not reach their hung orchestrator turn within 5 minutes")
        await asyncio.sleep(0.2)
    return run_ids


async def bench(args: argparse.Namespace) -> None:
    with ScriptedLLM(HangingOrchestrator(cycles=1)) as llm, tempfile.TemporaryDirectory() as data_dir:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")},
            "SLEUTH_DATA_DIR": data_dir,
            "SLEUTH_MODEL": "openai/scripted",
            "SLEUTH_API_BASE": llm.base_url,
            "SLEUTH_API_KEY": "sk-bench",
            "SLEUTH_SEARCH": "local",
            "SLEUTH_MAX_RUNS": str(args.runs + 10),
            "NO_PROXY": "127.0.0.1",
            "no_proxy": "127.0.0.1",
        }
        port = free_port()
        started = time.perf_counter()
        print(f"load average at start: {load_average()}")
        proc, _, _ = start_server(env, port, Path(data_dir) / "server.out", started)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
                warm_s = await wait_warm(client, started)
                await asyncio.sleep(args.idle_s)  # the server's own background start-up work settles
                idle = snapshot(proc.pid)
                print(f"\n`sleuth serve` idle, {args.idle_s:g} s after the engines were warm ({warm_s:.1f} s in)")
                for name, (rss, pss) in idle.items():
                    print(f"  {name:<12} RSS {mib(rss)}  PSS {mib(pss)}")
                rss_sum, pss_sum = total(idle)
                api_rss = idle["API process"][0]
                print(
                    f"  {'all':<12} RSS {mib(rss_sum)} = {mb(rss_sum)}  PSS {mib(pss_sum)} = {mb(pss_sum)}\n"
                    f"  API process RSS target <= {API_TARGET_MIB} MiB: "
                    f"{'met' if api_rss * 1024 <= API_TARGET_MIB * MIB else 'NOT met'}; "
                    f"whole server RSS target <= {TOTAL_TARGET_MB} MB: "
                    f"{'met' if rss_sum * 1024 <= TOTAL_TARGET_MB * 1e6 else 'NOT met'}"
                )
                if args.runs:
                    run_ids = await hold_runs(client, llm, args.runs)
                    live = snapshot(proc.pid)
                    live_rss, live_pss = total(live)
                    print(
                        f"\n{args.runs} live runs: RSS {mib(live_rss)}, PSS {mib(live_pss)}; per live run "
                        f"RSS {mib((live_rss - rss_sum) // args.runs)}, PSS {mib((live_pss - pss_sum) // args.runs)}"
                    )
                    for run_id in run_ids:
                        await client.post(f"/api/runs/{run_id}/cancel")
        finally:
            proc.terminate()
            proc.wait(30)
        print(f"load average at end: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="live runs for the per-run figure (0: none)")
    parser.add_argument("--idle-s", type=float, default=5.0)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
