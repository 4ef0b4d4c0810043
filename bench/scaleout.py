"""Scale-out benchmark (prints figures; not a test).

    .venv/bin/python bench/scaleout.py [--servers 2] [--workers 4] [--runs 1000] [--latency 0.05]

Starts, on this machine, the scripted model (every reply delayed by --latency seconds) in its own
process, --workers `sleuth worker` processes and --servers `sleuth serve` processes, all against a
fresh schema of the local PostgreSQL and a Redis database emptied before and after (--redis-url).
Then it starts --runs runs at once, each POSTed to one API server (round robin) and streamed from
the *next* one, so every packet crosses processes through Redis. Prints:

- completed runs and throughput (completed runs per second of wall time);
- POST -> 202 and POST -> first packet received, p50/p99;
- delivery delay p50/p99: the packet's creation (`packets.created_at`, written by the worker) to
  its receipt by the client on another server, for packets created after the client subscribed;
- peak RSS of each process (servers, workers with their engine processes), and CPU per run of the
  workers and of the servers (user+sys from /proc);
- the load average before and after: on this 2-core machine the model, the servers, the workers,
  PostgreSQL, Redis and this client all share two cores, so throughput is bounded by CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import redis
from httpx_sse import aconnect_sse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402
from server import cpu_s, percentile, serve_model  # noqa: E402
from sleuth_testkit.databases import fresh_schema  # noqa: E402
from sleuth_testkit.net import free_port  # noqa: E402

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
SLEUTH = str(Path(sys.executable).parent / "sleuth")
RECONNECTS = 5  # per stream, before the run counts as not completed


@dataclass
class Process:
    role: str
    proc: subprocess.Popen[bytes]
    port: int | None = None
    peak_kb: int = 0
    cpu_before: float = 0.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def tree(self) -> list[int]:
        return _tree(self.proc.pid)


@dataclass
class RunTimes:
    posted: float
    answered: float = 0.0
    subscribed: float = 0.0
    received: list[tuple[int, float]] = field(default_factory=list)
    reason: str | None = None
    reconnects: int = 0


def _tree(pid: int) -> list[int]:
    pids, queue = [], [pid]
    while queue:
        each = queue.pop()
        pids.append(each)
        for task in Path(f"/proc/{each}/task").glob("*"):
            try:
                queue += [int(c) for c in (task / "children").read_text().split()]
            except (FileNotFoundError, ProcessLookupError):
                pass
    return pids


def tree_rss_kb(process: Process) -> int:
    return sum(rss_kb_one(pid) for pid in process.tree())


def rss_kb_one(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def tree_cpu_s(process: Process) -> float:
    return sum(cpu_s(pid) for pid in process.tree())


def flush_redis(url: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def wait_health(process: Process, log: Path, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:  # another process's port: bounded poll
        if process.proc.poll() is not None:
            raise RuntimeError(f"{process.role} exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{process.base_url}/api/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{process.role} did not answer /api/health:\n{log.read_text()[-3000:]}")


async def one_run(post_to: httpx.AsyncClient, stream_from: httpx.AsyncClient, times: dict[str, RunTimes]) -> None:
    sent = time.time()
    response = await post_to.post("/api/research", json={"question": QUESTION, "clarify": False})
    if response.status_code != 202:
        print(f"refused: {response.status_code} {response.text[:200]}", file=sys.stderr)
        return
    run_id = str(response.json()["run_id"])
    run = times[run_id] = RunTimes(posted=sent, answered=time.time())
    # As an EventSource does: a stream cut by the network is resumed with Last-Event-ID (a pooled
    # keep-alive connection the server closed as it was reused is the usual cause under this load).
    for attempt in range(RECONNECTS + 1):
        headers = {"Last-Event-ID": str(run.received[-1][0])} if run.received else {}
        try:
            async with aconnect_sse(stream_from, "GET", f"/api/runs/{run_id}/events", headers=headers) as source:
                if not run.subscribed:
                    run.subscribed = time.time()  # packets created before this are catch-up, not live delivery
                async for sse in source.aiter_sse():
                    run.received.append((int(sse.id), time.time()))
                    if '"type":"stop"' in sse.data:
                        run.reason = json.loads(sse.data)["obj"]["reason"]
            return
        except httpx.TransportError as exc:  # counted as not completed if it keeps breaking, and said why
            run.reconnects = attempt + 1
            run.reason = f"stream broke after {len(run.received)} packets: {type(exc).__name__} {exc}"


async def sample_peaks(processes: list[Process], stop: asyncio.Event) -> None:
    while not stop.is_set():
        for process in processes:
            process.peak_kb = max(process.peak_kb, tree_rss_kb(process))
        try:
            await asyncio.wait_for(stop.wait(), 0.25)
        except TimeoutError:
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before each scripted reply")
    parser.add_argument(
        "--worker-concurrency", type=int, default=None, help="runs at a time per worker (default: runs / workers)"
    )
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14", help="a Redis database it may empty")
    args = parser.parse_args()
    flush_redis(args.redis_url)
    try:
        with fresh_schema(args.database_url) as database_url:
            asyncio.run(bench(args, database_url))
    finally:
        flush_redis(args.redis_url)


async def bench(args: argparse.Namespace, database_url: str) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="sleuth-scaleout-"))
    receiver, sender = multiprocessing.Pipe(duplex=False)
    model_stop = multiprocessing.Event()
    model = multiprocessing.Process(target=serve_model, args=(args.latency, sender, model_stop), daemon=True)
    model.start()
    model_url = receiver.recv()
    concurrency = args.worker_concurrency or -(-args.runs // args.workers)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")},
        "SLEUTH_DATA_DIR": str(data_dir),
        "SLEUTH_MODEL": "openai/scripted",
        "SLEUTH_API_BASE": model_url,
        "SLEUTH_API_KEY": "sk-bench",
        "SLEUTH_MAX_RUNS": str(args.runs + 10),
        "SLEUTH_DATABASE_URL": database_url,
        "SLEUTH_REDIS_URL": args.redis_url,
        "SLEUTH_ENGINE_PROCESSES": "1",
    }
    processes: list[Process] = []
    load_at_start = load_average()
    try:
        started = time.perf_counter()
        for index in range(args.workers):
            log = data_dir / f"worker-{index}.out"
            command = [SLEUTH, "worker", "--concurrency", str(concurrency)]
            proc = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
            processes.append(Process(f"worker {index}", proc))
        servers: list[Process] = []
        for index in range(args.servers):
            port = free_port()
            log = data_dir / f"server-{index}.out"
            command = [SLEUTH, "serve", "--port", str(port), "--log-level", "warning"]
            proc = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
            servers.append(Process(f"server {index}", proc, port))
        processes += servers
        for index, server in enumerate(servers):
            await asyncio.to_thread(wait_health, server, data_dir / f"server-{index}.out")
        up_s = time.perf_counter() - started
        # Idle connections are dropped well before uvicorn's 5 s keep-alive closes them: a request sent
        # on a connection the server is closing fails with ReadError, and a POST cannot be retried.
        limits = httpx.Limits(
            max_connections=args.runs * 2 + 10, max_keepalive_connections=args.runs * 2 + 10, keepalive_expiry=1.0
        )
        clients = [httpx.AsyncClient(base_url=s.base_url, timeout=900, limits=limits) for s in servers]
        try:
            # Warm-up: a few runs through every worker's engines before anything is measured.
            await asyncio.gather(
                *(
                    one_run(clients[i % len(clients)], clients[(i + 1) % len(clients)], {})
                    for i in range(args.workers * 2)
                )
            )
            for process in processes:
                process.cpu_before = tree_cpu_s(process)
                process.peak_kb = tree_rss_kb(process)
            load_before = load_average()
            stop = asyncio.Event()
            sampler = asyncio.create_task(sample_peaks(processes, stop))
            times: dict[str, RunTimes] = {}
            begun = time.perf_counter()
            await asyncio.gather(
                *(one_run(clients[i % len(clients)], clients[(i + 1) % len(clients)], times) for i in range(args.runs))
            )
            wall = time.perf_counter() - begun
            stop.set()
            await sampler
            load_after = load_average()
            cpu = {p.role: tree_cpu_s(p) - p.cpu_before for p in processes}
        finally:
            for client in clients:
                await client.aclose()
    finally:
        for process in processes:
            process.proc.terminate()
        for process in processes:
            try:
                process.proc.wait(60)
            except subprocess.TimeoutExpired:
                process.proc.kill()
        model_stop.set()
        model.join(10)

    created: dict[tuple[str, int], float] = {}
    with psycopg.connect(database_url) as conn:
        for run_id, seq, at in conn.execute("SELECT run_id, seq, created_at FROM packets"):
            created[(run_id, seq)] = at
    first_ms: list[float] = []
    delays: list[float] = []
    caught_up = 0
    for run_id, run in times.items():
        if run.received:
            first_ms.append((run.received[0][1] - run.posted) * 1000)
        for seq, at in run.received:
            made = created[(run_id, seq)]
            if made >= run.subscribed:
                delays.append((at - made) * 1000)
            else:
                caught_up += 1
    completed = sum(1 for run in times.values() if run.reason == "completed")
    for reason, count in Counter(run.reason for run in times.values() if run.reason != "completed").items():
        print(f"not completed: {count} x {reason}")
    post_ms = [(run.answered - run.posted) * 1000 for run in times.values()]
    delays.sort()
    print(f"topology                       {args.servers} API servers, {args.workers} workers x {concurrency} runs")
    print(f"cores                          {os.cpu_count()} ({load_at_start} before start)")
    print(f"start -> every server healthy  {up_s:.1f} s")
    print(f"runs started concurrently      {args.runs} (scripted model latency {args.latency * 1000:.0f} ms per reply)")
    print(f"runs completed                 {completed}/{args.runs} in {wall:.1f} s wall")
    print(f"throughput                     {completed / wall:.2f} runs/s")
    print(
        f"POST -> 202                    p50 {statistics.median(post_ms):.0f} / p99 {percentile(post_ms, 0.99):.0f} ms"
    )
    print(
        f"POST -> 1st packet received    p50 {statistics.median(first_ms):.0f}"
        f" / p99 {percentile(first_ms, 0.99):.0f} ms"
    )
    print(
        f"packets delivered              {len(delays) + caught_up} ({caught_up} created before their client subscribed)"
    )
    broken = sum(1 for run in times.values() if [seq for seq, _ in run.received] != list(range(len(run.received))))
    print(f"streams with a gap or duplicate {broken}")
    resumed = [run.reconnects for run in times.values() if run.reconnects]
    print(f"streams resumed (Last-Event-ID) {len(resumed)} ({sum(resumed)} reconnects)")
    print(
        f"delivery delay p50 / p99 / max {statistics.median(delays):.1f}"
        f" / {percentile(delays, 0.99):.1f} / {delays[-1]:.1f} ms"
    )
    for process in processes:
        print(
            f"{process.role:<30} peak RSS {process.peak_kb / 1024:.0f} MiB,"
            f" CPU per run {cpu[process.role] / max(completed, 1) * 1000:.0f} ms"
        )
    for role in ("worker", "server"):
        total = sum(spent for name, spent in cpu.items() if name.startswith(role))
        print(f"all {role}s: CPU per run        {total / max(completed, 1) * 1000:.0f} ms")
    print(f"load                           {load_before} before the runs, {load_after} after")


if __name__ == "__main__":
    main()
