"""The first run after start (issue 27, point 3): prints figures; not a test.

    .venv/bin/python bench/first_run.py [--repeat 3] [--engines 2]

Starts `sleuth serve` (fresh data dir, free port), reads its stdout until the line that carries its
address (`Sleuth is ready: http://...`, printed once it can run research), and at once POSTs a
research request and follows its events. Twice per repeat: with the offline model (the embedded
default), and with the scripted OpenAI-compatible model from sleuth_testkit, which records when
each request arrives. Prints, per repeat and as medians:

- start -> address printed (the warm-up the user waits for, with no figure to beat);
- address -> `/api/health` says `ready` (must be at once: the address is printed once it is);
- address -> the run's first packet received (target <= 1 s at load < 2);
- address -> the first model request reaching the scripted model (target <= 3 s at load < 2).

With `--backend DIR` the server runs the `sleuth` package under DIR (its PYTHONPATH), for a
comparison with a checkout from before the address waited for readiness: there the address is
uvicorn's own line ("Uvicorn running on http://..."), printed when the port opens.

The load average is printed beside the figures: on a loaded machine the warm-up grows most.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from httpx_sse import aconnect_sse

from sleuth.cli.serve import READY
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.net import free_port
from sleuth_testkit.scenarios import ResearchModel

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
STARTUP_S = 300.0
UVICORN = "Uvicorn running on"  # the address line of a server from before READY


@dataclass
class FirstRun:
    to_address: float  # process start -> the address line read
    health_ready: bool  # /api/health's `ready` asked right after the address line
    first_packet: float  # address -> first packet received
    first_request: float | None  # address -> first model request (scripted model only)
    load: str


async def first_run(engines: int, llm: ScriptedLLM | None, backend: str | None) -> FirstRun:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="sleuth-first-run-") as data:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
        env.update(SLEUTH_DATA_DIR=data, SLEUTH_ENGINE_PROCESSES=str(engines), NO_PROXY="127.0.0.1")
        if backend is not None:
            env["PYTHONPATH"] = backend
        if llm is not None:
            env.update(SLEUTH_MODEL="openai/scripted", SLEUTH_API_BASE=llm.base_url, SLEUTH_API_KEY="sk-bench")
            llm.calls.clear()
        script = Path(sys.executable).parent / "sleuth"
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            str(script), "serve", "--port", str(port), "--log-level", "info",
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        assert proc.stdout is not None
        draining: asyncio.Task[bytes] | None = None
        try:
            while True:
                line = (await asyncio.wait_for(proc.stdout.readline(), STARTUP_S)).decode()
                if not line:
                    raise RuntimeError(f"sleuth serve exited with {await proc.wait()} before its address")
                if line.startswith(READY) or UVICORN in line:
                    address = time.perf_counter()
                    break
            draining = asyncio.create_task(proc.stdout.read())  # the rest of its output: a full pipe would block it
            found = re.search(r"http://[^\s/]+", line)
            assert found is not None, line
            base = found.group(0)
            async with httpx.AsyncClient(base_url=base, timeout=STARTUP_S) as client:
                # The run is asked first (a user who opens the address at once); health after it.
                post = asyncio.create_task(client.post("/api/research", json={"question": QUESTION, "clarify": False}))
                ready = bool((await client.get("/api/health")).json().get("ready", False))
                response = await post
                response.raise_for_status()
                run_id = response.json()["run_id"]
                first_packet = None
                async with aconnect_sse(client, "GET", f"/api/runs/{run_id}/events") as source:
                    async for _sse in source.aiter_sse():
                        if first_packet is None:
                            first_packet = time.perf_counter() - address
                            if llm is None:
                                break
                        if llm is not None and llm.calls:
                            break
                assert first_packet is not None
                first_request = None
                if llm is not None:
                    first_request = min(call.arrived for call in llm.calls) - address
                await client.post(f"/api/runs/{run_id}/cancel")
            return FirstRun(address - started, ready, first_packet, first_request, load_average())
        finally:
            if proc.returncode is None:
                proc.terminate()
                await proc.wait()
            if draining is not None:
                await draining


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", type=int, default=os.cpu_count() or 1, help="SLEUTH_ENGINE_PROCESSES")
    parser.add_argument("--backend", help="run the server from the sleuth package under this directory")
    args = parser.parse_args()
    print(
        f"sleuth serve ({args.backend or 'this checkout'}), {args.engines} engine process(es); "
        f"load average before: {load_average()}"
    )
    results: dict[str, list[FirstRun]] = {"offline": [], "scripted": []}
    with ScriptedLLM(ResearchModel()) as llm:
        for n in range(args.repeat):
            for model, scripted in (("offline", None), ("scripted", llm)):
                run = await first_run(args.engines, scripted, args.backend)
                results[model].append(run)
                print(
                    f"  {n + 1} {model:8}: address after {run.to_address:.1f} s; health ready then: "
                    f"{run.health_ready}; first packet {ms(run.first_packet)}, first model request "
                    f"{ms(run.first_request)} after it (load {run.load})"
                )
    print("medians (after the address was printed; targets: first packet <= 1 s, first request <= 3 s):")
    for model, runs in results.items():
        requests = [r.first_request for r in runs if r.first_request is not None]
        print(
            f"  {model:8}: address {statistics.median(r.to_address for r in runs):.1f} s after start; "
            f"first packet {ms(statistics.median(r.first_packet for r in runs))}; "
            f"first model request {ms(statistics.median(requests) if requests else None)}; "
            f"health ready at the address: {sum(r.health_ready for r in runs)} of {len(runs)}"
        )
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    asyncio.run(main())
