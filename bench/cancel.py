"""Cancel benchmark (prints figures; not a test): how long a cancel takes to end a live run.

    .venv/bin/python bench/cancel.py [--runs 20]

Starts the scripted model with an orchestrator that never answers after the plan (a run stays
live until cancelled) and a `sleuth serve` process pointed at it. For each run, one after
another: start it, read its stream up to `plan_done`, then POST its cancel and time

- POST cancel -> the answer (the server answers once the run has ended, or after
  SLEUTH_CANCEL_WAIT_S: the answer's `status` says which), and
- POST cancel -> the `stop` packet received on the run's stream.

Target (docs/performance.md): a cancel ends the run within a second: p50 and max <= 1 s on
a quiet machine. Timings depend on the machine's load: the load average is printed with them.
The tests check what a cancel does (tests/api/test_cancel.py), not how fast: under load a wall
time measures the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from httpx_sse import aconnect_sse

from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.net import free_port
from sleuth_testkit.scenarios import HangingOrchestrator

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def start_server(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [str(Path(sys.executable).parent / "sleuth"), "serve", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    while proc.poll() is None:  # another process's port: poll until it answers or the process exits
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        try:
            proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            pass
    raise RuntimeError(log.read_text()[-3000:])


async def one_cancel(client: httpx.AsyncClient) -> tuple[float, float, str]:
    started = await client.post("/api/research", json={"question": QUESTION, "clarify": False})
    started.raise_for_status()
    run_id = started.json()["run_id"]
    stopped = asyncio.get_running_loop().create_future()

    async def watch() -> None:
        async with aconnect_sse(client, "GET", f"/api/runs/{run_id}/events") as source:
            async for sse in source.aiter_sse():
                kind = json.loads(sse.data)["obj"]["type"]
                if kind == "plan_done" and not planned.done():
                    planned.set_result(None)
                if kind == "stop":
                    stopped.set_result(time.perf_counter())
                    return

    planned: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    watching = asyncio.create_task(watch())
    await planned
    sent = time.perf_counter()
    answer = await client.post(f"/api/runs/{run_id}/cancel")
    answered = time.perf_counter()
    await watching
    return answered - sent, await stopped - sent, answer.json()["status"]


def p50_max(seconds: list[float]) -> str:
    return f"p50 {statistics.median(seconds) * 1000:.0f} ms, max {max(seconds) * 1000:.0f} ms"


async def bench(args: argparse.Namespace) -> None:
    with ScriptedLLM(HangingOrchestrator()) as llm, tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")},
            "SLEUTH_DATA_DIR": str(Path(tmp) / "data"),
            "SLEUTH_MODEL": "openai/scripted",
            "SLEUTH_API_BASE": llm.base_url,
            "SLEUTH_API_KEY": "sk-bench",
            "SLEUTH_ENGINE_PROCESSES": "1",
        }
        proc = start_server(env, port, Path(tmp) / "server.log")
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
                await one_cancel(client)  # warm-up: the engine's first run loads its code
                results = [await one_cancel(client) for _ in range(args.runs)]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    answers = [r[0] for r in results]
    stops = [r[1] for r in results]
    statuses = {s: sum(1 for r in results if r[2] == s) for s in {r[2] for r in results}}
    print(f"{args.runs} cancels of a live run ({load_average()})")
    print(f"  POST cancel -> answer:        {p50_max(answers)}")
    print(f"  POST cancel -> stop received: {p50_max(stops)}")
    print(f"  answer status: {statuses}  (target: every cancel ends its run within 1 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
