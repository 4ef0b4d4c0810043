"""The job queue runs wait in until a worker takes them: procrastinate, in the shared PostgreSQL.

A queued job carries the run id and its request; everything else about the run is in the store.
The API server only defers jobs; `sleuth worker` registers the task that executes them.
procrastinate's own tables live next to Sleuth's and are created, once, by the first process
that needs them (its schema is the library's, so it is applied as the library ships it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import TypeAdapter

from sleuth.core import heavy
from sleuth.stream.results import ResearchRequest

QUEUE = "sleuth-runs"
TASK = "sleuth.run"
_SCHEMA_LOCK = 0x5E1E7_0B5  # serialises concurrent first starts (pg_advisory_xact_lock)

_REQUEST = TypeAdapter(ResearchRequest)

# LISTEN/NOTIFY wakes a worker at once; the poll is only the fallback for a lost notification.
WORKER_OPTIONS: dict[str, Any] = {"listen_notify": True, "fetch_job_polling_interval": 1.0, "delete_jobs": "always"}

RunJob = Callable[[str, str], Awaitable[None]]  # (run id, request JSON)


def ensure_queue_schema(url: str) -> None:
    """Create procrastinate's tables if this database has none yet (blocking)."""
    with heavy.psycopg.connect(url) as conn:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
        if row is None or row[0] is None:
            conn.execute(heavy.SchemaManager.get_schema())
        conn.commit()


def queue_app(url: str, *, pool_size: int) -> heavy.procrastinate.App:
    connector = heavy.procrastinate.PsycopgConnector(conninfo=url, min_size=1, max_size=pool_size)
    return heavy.procrastinate.App(connector=connector)


def register_run_task(app: heavy.procrastinate.App, run_job: RunJob) -> None:
    """A worker's side: `run_job` executes each run taken from the queue. Never retried: a run
    that ended (even badly) has told its clients so, and starting it again would contradict them."""

    async def run(run_id: str, request_json: str) -> None:
        await run_job(run_id, request_json)

    app.task(name=TASK, queue=QUEUE, retry=False)(run)


def encode_request(request: ResearchRequest) -> str:
    return _REQUEST.dump_json(request).decode()


def decode_request(text: str) -> ResearchRequest:
    return _REQUEST.validate_json(text)


async def enqueue(app: heavy.procrastinate.App, run_id: str, request: ResearchRequest) -> None:
    # The run id is the job's queueing lock, unique anyway, so a queued run's job can be found by it.
    deferrer: Any = app.configure_task(TASK, queue=QUEUE, queueing_lock=run_id)
    await deferrer.defer_async(run_id=run_id, request_json=encode_request(request))


async def in_queue(app: heavy.procrastinate.App, run_ids: list[str]) -> set[str]:
    """Those of these runs that have a job, waiting or taken (a finished job is deleted)."""
    if not run_ids:
        return set()
    # By the job's argument, not its queueing lock: a job queued before runs had one still counts.
    # The table only holds jobs waiting or running (finished ones are deleted), so it stays small.
    rows = await app.connector.execute_query_all_async(
        "SELECT args->>'run_id' AS run_id FROM procrastinate_jobs WHERE args->>'run_id' = ANY(%(ids)s)", ids=run_ids
    )
    return {str(row["run_id"]) for row in rows}


async def withdraw(app: heavy.procrastinate.App, run_id: str) -> bool:
    """Take a run's job out of the queue if no worker has taken it yet. True: no worker ever will.
    Atomic against a worker fetching it (the job must still be `todo`), so exactly one side wins."""
    jobs = await app.job_manager.list_jobs_async(queue=QUEUE, status="todo", queueing_lock=run_id)
    for job in jobs:
        if job.id is not None and await app.job_manager.cancel_job_by_id_async(job.id, delete_job=True):
            return True
    return False
