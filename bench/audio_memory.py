"""Audio under a burst (prints figures; not a test).

    PYTHONPATH=backend .venv/bin/python bench/audio_memory.py [--chars 29000] [--requests 8]

Stores one completed report of about --chars characters of prose straight into a fresh data dir,
starts `sleuth serve` on 127.0.0.1 (offline speech: eSpeak NG; one engine process), waits until
its memory has settled after start-up, and sends --requests narration requests for that report at
once, as issue 24 did. Then it follows every job the server started until it ends, sampling the
RSS of the server process alone and of its whole process tree (engine processes and eSpeak NG
included) every 0.1 s, and prints: the answer codes, the jobs started, their outcome and length,
the peak RSS, the RSS once every job has ended (3 seconds after the last) and the bytes of audio
written. Runs against whichever `sleuth` package PYTHONPATH names, so the same command measures
main and a branch.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402
from scaleout import Process, rss_kb_one, tree_rss_kb  # noqa: E402
from sleuth.store.records import (
    RunRecord,  # noqa: E402
    now_iso,  # noqa: E402
)
from sleuth.store.store import Store  # noqa: E402
from sleuth.stream.results import ResearchResult  # noqa: E402
from sleuth_testkit.net import free_port  # noqa: E402

SLEUTH = str(Path(sys.executable).parent / "sleuth")
PARAGRAPH = (
    "Attribute lookup on an instance first asks the type for a data descriptor, then the instance "
    "dictionary, then a non-data descriptor or class attribute, and only then calls __getattr__. "
    "Properties are data descriptors, so they win over the instance dictionary; functions are "
    "non-data descriptors, which is why an instance attribute can shadow a method. "
)


def store_long_report(data_dir: Path, chars: int) -> str:
    """A completed report of about `chars` characters of prose, stored as a run would store it."""
    sections, body = [], 0
    while body < chars:
        number = len(sections) + 1
        text = f"## Part {number}\n\n{PARAGRAPH * 3}\n\n- A point of part {number} [1].\n"
        sections.append(text)
        body += len(text)
    store = Store(data_dir)
    try:
        store.create_session("s_bench", "audio benchmark")
        run = RunRecord(
            id="r_bench",
            session_id="s_bench",
            question="How does attribute lookup work?",
            kind="question",
            status="running",
            owner_host="bench",
            owner_pid=0,
            created_at=now_iso(),
        )
        store.create_run(run)
        report = ResearchResult(
            status="completed",
            stop_reason="completed",
            report_id="rep_bench",
            question=run.question,
            title="Attribute lookup",
            summary="Data descriptors first, then the instance dictionary, then __getattr__.",
            markdown="\n".join(sections),
        )
        store.finish_run(
            "r_bench",
            status="completed",
            stop_reason="completed",
            report_id="rep_bench",
            result=report,
            session_id="s_bench",
        )
    finally:
        store.close()
    return "rep_bench"


async def sample(server: Process, peaks: dict[str, int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peaks["server"] = max(peaks["server"], rss_kb_one(server.proc.pid))
        peaks["tree"] = max(peaks["tree"], tree_rss_kb(server))
        try:
            await asyncio.wait_for(stop.wait(), 0.1)
        except TimeoutError:
            pass


async def follow(client: httpx.AsyncClient, audio_id: str, timeout_s: float) -> dict[str, object]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:  # another process's job, with nothing to await: bounded poll
        status: dict[str, object] = (await client.get(f"/api/audio/{audio_id}")).json()
        if status["status"] != "pending":
            return status
        await asyncio.sleep(0.5)
    return {"status": "still pending", "error": f"after {timeout_s:.0f} s"}


async def settle(client: httpx.AsyncClient, server: Process) -> None:
    """Wait until the engines are warm and the tree's RSS has stopped moving (litellm loads in the
    background after start-up): the idle figure is then the server's own, not its warm-up."""
    for _ in range(240):  # another process's state, with nothing to await: bounded poll
        health = (await client.get("/api/health")).json()
        before = tree_rss_kb(server)
        await asyncio.sleep(2)
        if health.get("engines_ready", 1) >= health.get("engines", 1) and abs(tree_rss_kb(server) - before) < 1024:
            return
    raise RuntimeError("the server's memory did not settle within 8 minutes")


async def burst(base_url: str, report_id: str, requests: int, server: Process, timeout_s: float) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        await settle(client, server)
    peaks = {"server": 0, "tree": 0}
    idle = {"server": rss_kb_one(server.proc.pid), "tree": tree_rss_kb(server)}
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample(server, peaks, stop))
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        url = f"/api/reports/{report_id}/audio"
        answers = await asyncio.gather(*(client.post(url, json={"style": "narration"}) for _ in range(requests)))
        jobs = sorted({str(a.json()["audio_id"]) for a in answers if a.status_code in (200, 202)})
        ended = await asyncio.gather(*(follow(client, audio_id, timeout_s) for audio_id in jobs))
    elapsed = time.perf_counter() - started
    await asyncio.sleep(3)  # let the server settle before the after-job figure
    after = {"server": rss_kb_one(server.proc.pid), "tree": tree_rss_kb(server)}
    stop.set()
    await sampler
    codes = Counter(a.status_code for a in answers)
    print(f"answers: {dict(sorted(codes.items()))}; jobs started: {len(jobs)}; all ended in {elapsed:.1f} s")
    for audio_id, status in zip(jobs, ended, strict=True):
        print(f"  {audio_id}: {status['status']}, {status.get('media_type')}, {status.get('duration_s')} s, "
              f"{status.get('error') or ''}")  # fmt: skip
    for part in ("server", "tree"):
        print(
            f"RSS {part:6}: idle {idle[part] / 1024:.0f} MB, peak {peaks[part] / 1024:.0f} MB, "
            f"after the jobs {after[part] / 1024:.0f} MB"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=29_000, help="Characters of the report's body.")
    parser.add_argument("--requests", type=int, default=8, help="Narration requests sent at once.")
    parser.add_argument("--timeout", type=float, default=900, help="Seconds to wait for the jobs.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        report_id = store_long_report(data_dir, args.chars)
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
        env.update(SLEUTH_DATA_DIR=str(data_dir), SLEUTH_ENGINE_PROCESSES="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
        log = Path(tmp) / "server.log"
        command = [SLEUTH, "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
        server = Process("server", subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT))
        try:
            for _ in range(600):  # another process's port: bounded poll
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            else:
                raise RuntimeError(log.read_text()[-3000:])
            print(f"report of {args.chars} characters, {args.requests} narration requests at once")
            print(f"load average {load_average()}")
            asyncio.run(burst(f"http://127.0.0.1:{port}", report_id, args.requests, server, args.timeout))
        finally:
            server.proc.terminate()
            server.proc.wait(30)
        files = list((data_dir / "audio").glob("*")) if (data_dir / "audio").exists() else []
        written = sum(f.stat().st_size for f in files)
        kinds = ", ".join(sorted(f.suffix for f in files))
        print(f"audio written: {written / 1e6:.1f} MB in {len(files)} files ({kinds})")


if __name__ == "__main__":
    main()
