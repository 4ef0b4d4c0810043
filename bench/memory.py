"""Memory of an idle `sleuth serve` and of each further live run (prints figures; not a test).

    .venv/bin/python bench/memory.py [--runs 1 10] [--idle-s 5]

Starts the test kit's scripted model on a thread of this process and a `sleuth serve` with its
default engine processes, waits until /api/health says every engine is warm, lets the server idle
for --idle-s, and prints the RSS, PSS and USS of every process of the server (the API process, the
fork server the engines are forked from, each engine, multiprocessing's resource tracker) and their
sums. Then, for each count in --runs, it starts that many runs that stay live (the orchestrator's
second turn never answers), prints the memory per live run (the sums' growth over idle, divided by
the runs), cancels them and waits until they have ended.

RSS counts every page a process maps, so pages the engines share with their fork server are counted
once per process in a sum of RSS; PSS (proportional set size) splits each shared page between the
processes that map it, so the sum of PSS is the memory the server holds; USS is the pages only
that process holds (what its exit would free). The whole server's target is judged on the sum of
PSS, the API process's on its RSS (it shares next to nothing).

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
from server import server_processes, start_server, wait_warm  # noqa: E402

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
MIB = 1024 * 1024
API_TARGET_MIB = 150
TOTAL_TARGET_MB = 550


def memory_kib(pid: int) -> tuple[int, int, int]:
    """(RSS, PSS, USS) of one process in KiB, from /proc/PID/smaps_rollup. USS: its private pages."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Pss", "Private_Clean", "Private_Dirty"):
            fields[name] = int(rest.split()[0])
    return fields["Rss"], fields["Pss"], fields["Private_Clean"] + fields["Private_Dirty"]


def snapshot(server_pid: int) -> dict[str, tuple[int, int, int]]:
    return {name: memory_kib(pid) for name, pid in server_processes(server_pid).items()}


def total(figures: dict[str, tuple[int, int, int]]) -> tuple[int, int, int]:
    return (
        sum(rss for rss, _, _ in figures.values()),
        sum(pss for _, pss, _ in figures.values()),
        sum(uss for _, _, uss in figures.values()),
    )


def report(figures: dict[str, tuple[int, int, int]]) -> None:
    for name, (rss, pss, uss) in figures.items():
        print(f"  {name:<16} RSS {mib(rss)}  PSS {mib(pss)}  USS {mib(uss)}")
    rss_sum, pss_sum, uss_sum = total(figures)
    print(f"  {'all':<16} RSS {mib(rss_sum)}  PSS {mib(pss_sum)}  USS {mib(uss_sum)}")
    print(f"  {'':<16} RSS {mb(rss_sum)}  PSS {mb(pss_sum)}  USS {mb(uss_sum)}")


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
    already = len(llm.requests_for("orchestrator"))
    while len(llm.requests_for("orchestrator")) < already + 2 * runs:  # another process's progress: bounded poll
        if time.monotonic() > deadline:
            raise RuntimeError("the runs did not reach their hung orchestrator turn within 5 minutes")
        await asyncio.sleep(0.2)
    return run_ids


async def settle(client: httpx.AsyncClient) -> None:
    """Until the cancelled runs have ended (their engine's answer is another process's progress)."""
    deadline = time.monotonic() + 120
    while (await client.get("/api/health")).json()["active_runs"]:
        if time.monotonic() > deadline:
            raise RuntimeError("the cancelled runs did not end within 2 minutes")
        await asyncio.sleep(0.2)


async def bench(args: argparse.Namespace) -> None:
    with ScriptedLLM(HangingOrchestrator(cycles=1)) as llm, tempfile.TemporaryDirectory() as data_dir:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")},
            "SLEUTH_DATA_DIR": data_dir,
            "SLEUTH_MODEL": "openai/scripted",
            "SLEUTH_API_BASE": llm.base_url,
            "SLEUTH_API_KEY": "sk-bench",
            "SLEUTH_SEARCH": "local",
            "SLEUTH_MAX_RUNS": str(max(args.runs, default=0) + 10),
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
                report(idle)
                rss_sum, pss_sum, _ = total(idle)
                api_rss = idle["API process"][0]
                print(
                    f"  API process RSS target <= {API_TARGET_MIB} MiB: "
                    f"{'met' if api_rss * 1024 <= API_TARGET_MIB * MIB else 'NOT met'}; "
                    f"whole server PSS target <= {TOTAL_TARGET_MB} MB: "
                    f"{'met' if pss_sum * 1024 <= TOTAL_TARGET_MB * 1e6 else 'NOT met'}"
                )
                for runs in args.runs:
                    run_ids = await hold_runs(client, llm, runs)
                    live = snapshot(proc.pid)
                    live_rss, live_pss, _ = total(live)
                    print(f"\n{runs} live runs at once")
                    report(live)
                    print(
                        f"  per live run: RSS {mib((live_rss - rss_sum) // runs)}, "
                        f"PSS {mib((live_pss - pss_sum) // runs)}"
                    )
                    for run_id in run_ids:
                        await client.post(f"/api/runs/{run_id}/cancel")
                    await settle(client)
                    idle = snapshot(proc.pid)  # the next count's growth is measured from here
                    rss_sum, pss_sum, _ = total(idle)
        finally:
            proc.terminate()
            proc.wait(30)
        print(f"load average at end: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--runs", type=int, nargs="*", default=[10], help="live runs at once for the per-run figure, one count per step"
    )
    parser.add_argument("--idle-s", type=float, default=5.0)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
