"""How long a queued run waits for a worker that is idle: enqueue -> the job starts (prints figures).

Uses the very queue `sleuth serve` and `sleuth worker` use (procrastinate on PostgreSQL, woken by
LISTEN/NOTIFY) on a fresh schema of the local database, with a worker in this process whose job
only records when it started. Jobs are enqueued one at a time, each after the previous one
started, so the figure is the queue's own latency, not a backlog.

Run: .venv/bin/python bench/queue_latency.py [--jobs 200] [--database postgresql://postgres@127.0.0.1:5432/test]
The figures depend on the machine's load; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from sleuth.scaleout.queue import QUEUE, WORKER_OPTIONS, enqueue, ensure_queue_schema, queue_app, register_run_task
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.databases import fresh_schema


async def measure(url: str, jobs: int) -> list[float]:
    await asyncio.to_thread(ensure_queue_schema, url)
    app = queue_app(url, pool_size=6)
    started: dict[str, asyncio.Future[float]] = {}

    async def job(run_id: str, request_json: str) -> None:
        started[run_id].set_result(time.perf_counter())

    register_run_task(app, job)
    waits = []
    async with app.open_async():
        worker = asyncio.create_task(
            app.run_worker_async(**WORKER_OPTIONS, queues=[QUEUE], concurrency=4, install_signal_handlers=False)
        )
        request = ResearchRequest(question="How long does a queued run wait?")
        for index in range(jobs + 1):  # the first one only waits for the worker to be listening
            run_id = f"r_bench_{index}"
            started[run_id] = asyncio.get_running_loop().create_future()
            sent = time.perf_counter()
            await enqueue(app, run_id, request)
            waits.append(await asyncio.wait_for(started[run_id], timeout=30) - sent)
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
    return waits[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--database", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    with fresh_schema(args.database) as url:
        waits = sorted(asyncio.run(measure(url, args.jobs)))
    ms = [w * 1000 for w in waits]
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(
        f"enqueue -> job start over {len(ms)} jobs: p50 {statistics.median(ms):.1f} ms, p99 {p99:.1f} ms, "
        f"max {ms[-1]:.1f} ms (load average {os.getloadavg()[0]:.2f})"
    )


if __name__ == "__main__":
    main()
