"""Server benchmark (prints figures; not a test).

    .venv/bin/python bench/server.py [--runs 100] [--latency 0.05] [--database-url postgresql://...]

Starts the scripted model (every reply delayed by --latency seconds), a `sleuth serve` process
with SLEUTH_MAX_RUNS above --runs, and one SSE client per run, all at once. Prints completed
runs, p50/p99 delay from packet creation (the server's `packets.created_at`) to receipt by the
client, RSS per active run (server plus engine process, peak minus idle baseline), and the time to replay a finished
10,000-packet run synthesised directly in the store. Targets (issue 4): 100 runs all complete,
p99 <= 50 ms, <= 2 MB per active run, replay <= 200 ms. With --database-url (PostgreSQL) the
server stores into a fresh schema of that database, dropped afterwards; default: SQLite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import aconnect_sse

from sleuth.scripted.databases import fresh_schema
from sleuth.scripted.scenarios import ResearchModel
from sleuth.scripted.server import Reply, ScriptedLLM
from sleuth.store import RunRecord, Store
from sleuth.store.records import now_iso
from sleuth.store.recovery import this_host
from sleuth.stream.packets import MessageDelta, Packet, Placement, RunStart, Stop

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


class SlowModel(ResearchModel):
    def __init__(self, latency: float) -> None:
        super().__init__()
        self.latency = latency

    def __call__(self, body: dict[str, Any]) -> Reply:
        return replace(super().__call__(body), delay_s=self.latency)


def serve_model(latency: float, port_out: Any, stop: Any) -> None:
    """The scripted model in its own process, as a real provider would be: its streaming must not
    compete with the benchmark's clients for one interpreter lock."""
    with ScriptedLLM(SlowModel(latency)) as llm:
        port_out.send(llm.base_url)
        stop.wait()


def rss_kb(pid: int) -> int:
    """RSS of the server and its children (the engine process), in kB."""
    total = 0
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for each in [pid, *(int(c) for c in (children.read_text().split() if children.exists() else []))]:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    script = Path(sys.executable).parent / "sleuth"
    command = [str(script), "serve", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    for _ in range(600):  # waiting for another process's port: bounded poll
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(log.read_text()[-3000:])


async def one_run(
    client: httpx.AsyncClient, received: dict[str, list[tuple[int, float]]], subscribed: dict[str, float]
) -> str | None:
    response = await client.post("/api/research", json={"question": QUESTION, "clarify": False})
    if response.status_code != 202:
        return None
    run_id = str(response.json()["run_id"])
    got: list[tuple[int, float]] = []
    received[run_id] = got
    reason = None
    async with aconnect_sse(client, "GET", f"/api/runs/{run_id}/events") as source:
        # Packets created before the stream was open are catch-up (replay), not live delivery.
        subscribed[run_id] = time.time()
        async for sse in source.aiter_sse():
            got.append((int(sse.id), time.time()))
            if '"type":"stop"' in sse.data:
                reason = json.loads(sse.data)["obj"]["reason"]
    return reason


async def sample_rss(pid: int, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], rss_kb(pid))
        try:
            await asyncio.wait_for(stop.wait(), 0.05)
        except TimeoutError:
            pass


def synthesise_run(store: Store, count: int) -> str:
    run_id = "r_bench_replay"
    store.create_session("s_bench", "replay benchmark")
    store.create_run(
        RunRecord(
            id=run_id,
            session_id="s_bench",
            question="q",
            kind="question",
            status="completed",
            owner_host=this_host(),
            owner_pid=os.getpid(),
            created_at=now_iso(),
        )
    )
    placement = Placement(turn_index=0)
    rows = []
    for seq in range(count):
        obj = (
            RunStart(session_id="s_bench", question="q", mode="heavy", models={})
            if seq == 0
            else (Stop(reason="completed") if seq == count - 1 else MessageDelta(content=f"token {seq} of the report "))
        )
        packet = Packet(seq=seq, run_id=run_id, placement=placement, obj=obj)
        rows.append((run_id, seq, obj.type, time.time(), packet.model_dump_json()))
    store.insert_packets(rows)
    return run_id


async def replay_time(base_url: str, run_id: str) -> tuple[float, int]:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        started = time.perf_counter()
        count = 0
        async with aconnect_sse(client, "GET", f"/api/runs/{run_id}/events") as source:
            async for _ in source.aiter_sse():
                count += 1
        return time.perf_counter() - started, count


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before each scripted reply")
    parser.add_argument("--database-url", default=None, help="a PostgreSQL URL; default: SQLite in a temp dir")
    args = parser.parse_args()
    with fresh_schema(args.database_url) if args.database_url else nullcontext(None) as database_url:
        await bench(args, database_url)


async def bench(args: argparse.Namespace, database_url: str | None) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="sleuth-bench-"))
    before_load = os.getloadavg()
    receiver, sender = multiprocessing.Pipe(duplex=False)
    model_stop = multiprocessing.Event()
    model = multiprocessing.Process(target=serve_model, args=(args.latency, sender, model_stop), daemon=True)
    model.start()
    model_url = receiver.recv()
    try:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")},
            "SLEUTH_DATA_DIR": str(data_dir),
            "SLEUTH_MODEL": "openai/scripted",
            "SLEUTH_API_BASE": model_url,
            "SLEUTH_API_KEY": "sk-bench",
            "SLEUTH_MAX_RUNS": str(args.runs + 10),
            **({"SLEUTH_DATABASE_URL": database_url} if database_url else {}),
        }
        port = free_port()
        proc = start_server(env, port, data_dir / "server.out")
        base_url = f"http://127.0.0.1:{port}"
        try:
            # warm-up run: imports, corpus index, litellm caches are not per-run memory
            limits = httpx.Limits(max_connections=args.runs * 2 + 10, max_keepalive_connections=args.runs * 2 + 10)
            async with httpx.AsyncClient(base_url=base_url, timeout=600, limits=limits) as client:
                await one_run(client, {}, {})
                baseline = rss_kb(proc.pid)
                peak = [baseline]
                stop = asyncio.Event()
                sampler = asyncio.create_task(sample_rss(proc.pid, peak, stop))
                received: dict[str, list[tuple[int, float]]] = {}
                subscribed: dict[str, float] = {}
                started = time.perf_counter()
                reasons = await asyncio.gather(*(one_run(client, received, subscribed) for _ in range(args.runs)))
                wall = time.perf_counter() - started
                stop.set()
                await sampler

            store = Store(data_dir, database_url)
            delays: list[float] = []
            caught_up = 0
            for run_id, got in received.items():
                rows = store.database.fetch_all("SELECT seq, created_at FROM packets WHERE run_id = ?", (run_id,))
                created = {row["seq"]: row["created_at"] for row in rows}
                live = [(at - created[seq]) * 1000 for seq, at in got if created[seq] >= subscribed[run_id]]
                caught_up += len(got) - len(live)
                delays += live
            packets = len(delays) + caught_up
            replay_id = synthesise_run(store, 10_000)
            store.close()
            await replay_time(base_url, replay_id)  # first read warms the database's page cache
            replay_s, replayed = await replay_time(base_url, replay_id)
        finally:
            proc.terminate()
            proc.wait(30)
    finally:
        model_stop.set()
        model.join(10)

    delays.sort()
    completed = sum(1 for reason in reasons if reason == "completed")
    backend = "PostgreSQL" if database_url else "SQLite"
    print(f"store                          {backend}; load average before {before_load}, after {os.getloadavg()}")
    print(f"runs started concurrently      {args.runs} (scripted model latency {args.latency * 1000:.0f} ms per reply)")
    print(f"runs completed                 {completed}/{args.runs} in {wall:.1f} s wall")
    print(
        f"packets delivered              {packets}"
        f" ({caught_up} created before their client subscribed: replayed, not timed)"
    )
    print(
        f"delivery delay p50 / p99 / max {statistics.median(delays):.1f}"
        f" / {delays[int(len(delays) * 0.99)]:.1f} / {delays[-1]:.1f} ms"
    )
    print(f"RSS idle / peak (server+engine)        {baseline / 1024:.1f} / {peak[0] / 1024:.1f} MB")
    print(f"RSS per active run             {(peak[0] - baseline) / 1024 / args.runs:.2f} MB")
    print(f"replay of {replayed} packets    {replay_s * 1000:.0f} ms")


if __name__ == "__main__":
    asyncio.run(main())
