"""Server memory while several large files are uploaded at once (prints figures; not a test).

Starts `sleuth serve` on a free port of 127.0.0.1 with a temporary data dir and one engine process,
waits until it is warm and its memory has settled, writes a text file of `--mb` MB (prose:
sentences and paragraphs) and uploads it `--uploads` times at once: one file per request, each
into its own collection; a 429 is sent again after its Retry-After, as a client should. Meanwhile
it samples the server's process tree (the server, its engine, any extraction processes) every
20 ms: the peak of the summed RSS, and of the summed PSS (a page shared by forked processes
counted once), and the peak of one process of each kind.

Run on this checkout, or on another one to compare:
    .venv/bin/python bench/upload_rss.py
    PYTHONPATH=/other/checkout/backend .venv/bin/python bench/upload_rss.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx

from sleuth_testkit.net import free_port

WORDS = (
    "the index keeps every page of the manual and answers a query with the passages that match it best "
    "while a writer adds new documents in one transaction and readers see either all of them or none"
).split()


@dataclass
class Tree:
    rss_kb: int
    pss_kb: int
    processes: int
    by_process: dict[str, int]  # the peak RSS of each kind of process (server, engine, ...), kB


def _field_kb(path: Path, name: str) -> int:
    try:
        for line in path.read_text().splitlines():
            if line.startswith(name):
                return int(line.split()[1])
    except OSError:  # the process ended while it was read
        pass
    return 0


def tree(root: int) -> Tree:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    pids, todo, parent = [], [root], {root: 0}
    while todo:
        pid = todo.pop()
        pids.append(pid)
        for child in children.get(pid, []):
            parent[child] = pid
            todo.append(child)
    each = {pid: _field_kb(Path(f"/proc/{pid}/status"), "VmRSS:") for pid in pids}
    pss = sum(_field_kb(Path(f"/proc/{pid}/smaps_rollup"), "Pss:") for pid in pids)
    by_process: dict[str, int] = {}
    for pid, rss in each.items():
        kind = "server" if pid == root else "extraction" if parent[pid] != root else _kind(pid)
        by_process[kind] = max(by_process.get(kind, 0), rss)
    return Tree(sum(each.values()), pss, len(pids), by_process)


def _kind(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "ended"
    for marker, kind in (("forkserver", "fork server"), ("spawn_main", "engine"), ("resource_tracker", "tracker")):
        if marker in command:
            return kind
    return "other"


class Sampler(threading.Thread):
    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak = Tree(0, 0, 0, {})
        self.most_processes = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.02):
            now = tree(self.root)
            each = {k: max(v, self.peak.by_process.get(k, 0)) for k, v in now.by_process.items()}
            self.peak = Tree(
                max(self.peak.rss_kb, now.rss_kb),
                max(self.peak.pss_kb, now.pss_kb),
                0,
                {**self.peak.by_process, **each},
            )
            self.most_processes = max(self.most_processes, now.processes)


def settled(base: str, root: int) -> Tree:
    """The tree once the server answers, its engines are warm and its memory has stopped growing
    (the server loads litellm in the background after it starts)."""
    for _ in range(1200):
        try:
            health = httpx.get(f"{base}/api/health", timeout=1).json()
            if health.get("engines_ready", 0) >= health.get("engines", 0):
                break
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.1)
    last = tree(root)
    for _ in range(60):
        time.sleep(2)
        now = tree(root)
        if abs(now.rss_kb - last.rss_kb) < 2048:
            return now
        last = now
    return last


def write_text(path: Path, mb: int) -> None:
    rng = random.Random(7)
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < mb * 1_000_000:
            sentences = (" ".join(rng.choices(WORDS, k=rng.randint(8, 20))).capitalize() + "." for _ in range(6))
            out.write(" ".join(sentences) + "\n\n")


async def upload(client: httpx.AsyncClient, index: int, data: bytes) -> tuple[int, int]:
    """The final status and how many times the upload was sent."""
    for attempt in range(1, 1000):
        response = await client.post(
            f"/api/collections/bench{index}/documents", files=[("files", (f"big{index}.txt", data, "text/plain"))]
        )
        if response.status_code != 429:
            return response.status_code, attempt
        await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
    raise RuntimeError("still refused after 999 attempts")


async def upload_all(base: str, count: int, data: bytes) -> list[tuple[int, int]]:
    # No keep-alive: a retry after Retry-After (5 s) would race uvicorn closing the idle connection (5 s).
    keepalive = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=base, timeout=1800, limits=keepalive) as client:
        return list(await asyncio.gather(*(upload(client, i, data) for i in range(count))))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uploads", type=int, default=8)
    parser.add_argument("--mb", type=int, default=19)
    args = parser.parse_args()
    port = free_port()
    sleuth = str(Path(sys.executable).with_name("sleuth"))
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.txt"
        write_text(big, args.mb)
        data = big.read_bytes()
        env = {**os.environ, "SLEUTH_DATA_DIR": str(Path(tmp) / "data"), "SLEUTH_ENGINE_PROCESSES": "1"}
        server = subprocess.Popen(
            [sleuth, "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"], env=env
        )
        try:
            base = f"http://127.0.0.1:{port}"
            idle = settled(base, server.pid)
            sampler = Sampler(server.pid)
            sampler.start()
            started = time.perf_counter()
            results = asyncio.run(upload_all(base, args.uploads, data))
            elapsed = time.perf_counter() - started
            sampler.stop.set()
            sampler.join()
            after = tree(server.pid)
        finally:
            server.terminate()
            server.wait(60)
    statuses = Counter(status for status, _ in results)
    answers = ", ".join(f"{count} x {status}" for status, count in sorted(statuses.items()))
    sends = sum(attempts for _, attempts in results)
    print(f"{args.uploads} concurrent uploads of {len(data) / 1e6:.1f} MB (text): {answers}; {sends} sends")
    print(f"  all answered in {elapsed:.1f} s; at most {sampler.most_processes} processes in the server's tree")
    print(
        f"  server tree RSS: idle {idle.rss_kb / 1024:.0f} MB, peak {sampler.peak.rss_kb / 1024:.0f} MB,"
        f" after {after.rss_kb / 1024:.0f} MB"
    )
    print(
        f"  server tree PSS: idle {idle.pss_kb / 1024:.0f} MB, peak {sampler.peak.pss_kb / 1024:.0f} MB,"
        f" after {after.pss_kb / 1024:.0f} MB"
    )
    peaks = ", ".join(f"{kind} {kb / 1024:.0f} MB" for kind, kb in sorted(sampler.peak.by_process.items()))
    print(f"  peak RSS of one process of each kind: {peaks}")


if __name__ == "__main__":
    main()
