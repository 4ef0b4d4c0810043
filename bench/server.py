"""Server benchmark (prints figures; not a test).

    .venv/bin/python bench/server.py [--runs 100] [--latency 0.05] [--database-url postgresql://...]

Starts the scripted model (every reply delayed by --latency seconds), a `sleuth serve` process
with SLEUTH_MAX_RUNS above --runs, and one SSE client per run, all at once. Prints:

- the first run after start: POST sent as soon as /api/health answers -> its first packet received;
- completed runs, and POST -> first packet (created by the engine, and received by the client) p50/p99;
- p50/p99 delay from packet creation (the server's `packets.created_at`) to receipt by the client;
- engine CPU per run (user+sys of the engine processes over the concurrent runs, divided by the
  runs) and the server process's CPU per run, from /proc;
- RSS per active run (server plus engine processes, peak minus idle baseline), and the time to
  replay a finished 10,000-packet run synthesised directly in the store.

Targets (issues 4 and 12): 100 runs all complete, POST -> first packet p50 <= 100 ms, delivery
p99 <= 50 ms, first run after start <= 100 ms to its first packet, <= 2 MB per active run,
replay <= 200 ms. With --database-url (PostgreSQL) the server stores into a fresh schema of that
database, dropped afterwards; default: SQLite. Timings depend on the machine's load: the load
average is printed with them.
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
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import aconnect_sse

from sleuth.store.records import RunRecord, now_iso
from sleuth.store.recovery import this_host
from sleuth.store.store import Store
from sleuth.stream.packets import MessageDelta, Packet, Placement, RunStart, Stop
from sleuth_testkit.databases import fresh_schema
from sleuth_testkit.model import Reply, ScriptedLLM
from sleuth_testkit.net import free_port
from sleuth_testkit.scenarios import ResearchModel

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402

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


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:
            pass
    return found


def descendants_of(pid: int) -> list[int]:
    """Every process below `pid`: the engines are forked from a fork server, so they are grandchildren."""
    found: list[int] = []
    for child in children_of(pid):
        found += [child, *descendants_of(child)]
    return found


def rss_kb(pid: int) -> int:
    """RSS of the server and every process below it (fork server, engines), in kB."""
    total = 0
    for each in [pid, *descendants_of(pid)]:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def cpu_s(pid: int) -> float:
    """user + sys CPU seconds of one process, from /proc (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_processes(server_pid: int) -> dict[str, int]:
    """The server's processes by role: the API process, the fork server the engines are forked
    from, each engine, and multiprocessing's resource tracker."""
    processes = {"API process": server_pid}
    engines = 0
    for child in children_of(server_pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        if b"resource_tracker" in cmdline:
            processes["resource tracker"] = child
        elif b"forkserver" in cmdline:
            processes["fork server"] = child
            for engine in children_of(child):
                engines += 1
                processes[f"engine {engines}"] = engine
        elif b"multiprocessing" in cmdline:  # an engine spawned by the server itself
            engines += 1
            processes[f"engine {engines}"] = child
    return processes


def engine_pids(server_pid: int) -> list[int]:
    """The server's engine processes."""
    return [pid for name, pid in server_processes(server_pid).items() if name.startswith("engine")]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def start_server(
    env: dict[str, str], port: int, log: Path, started: float
) -> tuple[subprocess.Popen[bytes], float, str]:
    """Start `sleuth serve`; returns it once /api/health answers, how long that took, and how many
    engines were warm then."""
    script = Path(sys.executable).parent / "sleuth"
    command = [str(script), "serve", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        for _ in range(6000):  # waiting for another process's port: bounded poll
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1)
                if health.status_code == 200:
                    body = health.json()
                    warm = f"{body.get('engines_ready', '?')} of {body.get('engines', '?')} engines warm"
                    return proc, time.perf_counter() - started, warm
            except httpx.TransportError:
                time.sleep(0.005)
        raise RuntimeError(log.read_text()[-3000:])
    except BaseException:  # interrupted or failed: leave no server behind
        proc.kill()
        raise


async def wait_warm(client: httpx.AsyncClient, started: float) -> float:
    """Poll /api/health until every engine process is warm; seconds since `started`."""
    for _ in range(12000):  # another process's state, with nothing to await: bounded poll
        health = (await client.get("/api/health")).json()
        if health.get("engines_ready", 0) >= health.get("engines", 1):
            return time.perf_counter() - started
        await asyncio.sleep(0.005)
    raise RuntimeError("the engines did not warm up within a minute")


async def one_run(
    client: httpx.AsyncClient,
    received: dict[str, list[tuple[int, float]]],
    subscribed: dict[str, float],
    posted: dict[str, float] | None = None,
    answered: dict[str, float] | None = None,
) -> str | None:
    sent = time.time()
    response = await client.post("/api/research", json={"question": QUESTION, "clarify": False})
    if response.status_code != 202:
        return None
    run_id = str(response.json()["run_id"])
    if posted is not None:
        posted[run_id] = sent
    if answered is not None:
        answered[run_id] = time.time()
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


async def sample_peak(measure: Callable[[], int], peak: list[int], stop: asyncio.Event, every_s: float = 0.05) -> None:
    """Keep the largest reading of `measure` in peak[0] until `stop` is set."""
    while not stop.is_set():
        peak[0] = max(peak[0], measure())
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except TimeoutError:
            pass


async def sample_rss(pid: int, peak: list[int], stop: asyncio.Event) -> None:
    await sample_peak(lambda: rss_kb(pid), peak, stop)


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
    parser.add_argument(
        "--first-run-at-health",
        action="store_true",
        help="send the first run as soon as /api/health answers, not once the engines are warm",
    )
    args = parser.parse_args()
    with fresh_schema(args.database_url) if args.database_url else nullcontext(None) as database_url:
        await bench(args, database_url)


async def bench(args: argparse.Namespace, database_url: str | None) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="sleuth-bench-"))
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
        load_at_start = f"load average {load_average()}"
        started_at = time.perf_counter()
        proc, health_s, warm_at_health = start_server(env, port, data_dir / "server.out", started_at)
        base_url = f"http://127.0.0.1:{port}"
        try:
            limits = httpx.Limits(max_connections=args.runs * 2 + 10, max_keepalive_connections=args.runs * 2 + 10)
            async with httpx.AsyncClient(base_url=base_url, timeout=600, limits=limits) as client:
                # The first run, sent once /api/health says the engines have warmed up: does it still
                # pay for imports? (--first-run-at-health sends it as soon as health answers.)
                warm_s = health_s
                if not args.first_run_at_health:
                    warm_s = await wait_warm(client, started_at)
                first_received: dict[str, list[tuple[int, float]]] = {}
                first_posted: dict[str, float] = {}
                await one_run(client, first_received, {}, first_posted)
                ((first_id, first_got),) = first_received.items()
                first_run_ms = (first_got[0][1] - first_posted[first_id]) * 1000
                # Further warm-up runs (one per engine process, at least), so the measured runs
                # see warm caches, and the idle RSS includes what every engine loads once.
                await asyncio.gather(*(one_run(client, {}, {}) for _ in range(os.cpu_count() or 1)))
                engines = engine_pids(proc.pid)
                baseline = rss_kb(proc.pid)
                engine_cpu_before = sum(cpu_s(pid) for pid in engines)
                server_cpu_before = cpu_s(proc.pid)
                load_before = f"load average {load_average()}"
                peak = [baseline]
                stop = asyncio.Event()
                sampler = asyncio.create_task(sample_rss(proc.pid, peak, stop))
                received: dict[str, list[tuple[int, float]]] = {}
                subscribed: dict[str, float] = {}
                posted: dict[str, float] = {}
                answered: dict[str, float] = {}
                started = time.perf_counter()
                reasons = await asyncio.gather(
                    *(one_run(client, received, subscribed, posted, answered) for _ in range(args.runs))
                )
                wall = time.perf_counter() - started
                stop.set()
                await sampler
                engine_cpu = sum(cpu_s(pid) for pid in engines) - engine_cpu_before
                server_cpu = cpu_s(proc.pid) - server_cpu_before
                load_after = f"load average {load_average()}"

            store = Store(data_dir, database_url)
            delays: list[float] = []
            first_created: list[float] = []
            first_received_ms: list[float] = []
            caught_up = 0
            for run_id, got in received.items():
                rows = store.database.fetch_all("SELECT seq, created_at FROM packets WHERE run_id = ?", (run_id,))
                created = {row["seq"]: row["created_at"] for row in rows}
                first_created.append((created[0] - posted[run_id]) * 1000)
                first_received_ms.append((got[0][1] - posted[run_id]) * 1000)
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
    print(f"store                          {backend}")
    print(f"cores / engine processes       {os.cpu_count()} / {len(engines)}")
    print(
        f"server start -> /api/health    {health_s * 1000:.0f} ms ({warm_at_health} then; {load_at_start} before start)"
    )
    when = "as soon as /api/health answered" if args.first_run_at_health else "once the engines were warm"
    print(f"server start -> engines warm   {warm_s * 1000:.0f} ms")
    print(f"first run: POST -> 1st packet  {first_run_ms:.0f} ms (sent {when})")
    print(f"runs started concurrently      {args.runs} (scripted model latency {args.latency * 1000:.0f} ms per reply)")
    print(f"runs completed                 {completed}/{args.runs} in {wall:.1f} s wall")
    post_ms = [(answered[run_id] - posted[run_id]) * 1000 for run_id in answered]
    print(
        f"POST -> 202 answered           p50 {statistics.median(post_ms):.0f} / p99 {percentile(post_ms, 0.99):.0f} ms"
    )
    print(
        f"POST -> 1st packet created     p50 {statistics.median(first_created):.0f}"
        f" / p99 {percentile(first_created, 0.99):.0f} ms"
    )
    print(
        f"POST -> 1st packet received    p50 {statistics.median(first_received_ms):.0f}"
        f" / p99 {percentile(first_received_ms, 0.99):.0f} ms"
    )
    print(
        f"packets delivered              {packets}"
        f" ({caught_up} created before their client subscribed: replayed, not timed)"
    )
    print(
        f"delivery delay p50 / p99 / max {statistics.median(delays):.1f}"
        f" / {percentile(delays, 0.99):.1f} / {delays[-1]:.1f} ms"
    )
    print(f"engine CPU per run             {engine_cpu / args.runs:.3f} s (user+sys of the engine processes)")
    print(f"server CPU per run             {server_cpu / args.runs:.3f} s (user+sys of the server process)")
    print(f"RSS idle / peak (server+engine)        {baseline / 1024:.1f} / {peak[0] / 1024:.1f} MB")
    print(f"RSS per active run             {(peak[0] - baseline) / 1024 / args.runs:.2f} MB")
    print(f"replay of {replayed} packets    {replay_s * 1000:.0f} ms")
    print(f"load                           {load_before} before the runs, {load_after} after")
    targets = [  # (figure, value, target, whether the value must reach the target rather than stay under it)
        ("all runs complete", completed, args.runs, True),
        ("server start -> /api/health (ms)", health_s * 1000, 1000, False),
        ("first run: POST -> 1st packet (ms)", first_run_ms, 100, False),
        ("POST -> 1st packet created p50 (ms)", statistics.median(first_created), 100, False),
        ("delivery delay p99 (ms)", percentile(delays, 0.99), 50, False),
        # half of the 0.43 s issue 12 measured on a quiet machine; CPU time too grows with the load
        ("engine CPU per run (s)", engine_cpu / args.runs, 0.215, False),
        ("RSS per active run (MB)", (peak[0] - baseline) / 1024 / args.runs, 2, False),
        ("replay of 10,000 packets (ms)", replay_s * 1000, 200, False),
    ]
    print("targets (wall figures: judge them on a quiet machine)")
    for name, value, target, at_least in targets:
        met = value >= target if at_least else value <= target
        print(f"  {name:<36} {value:8.1f}  target {'>=' if at_least else '<='} {target}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    asyncio.run(main())
