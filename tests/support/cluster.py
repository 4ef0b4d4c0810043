"""Scale-out as deployed: API servers and workers as separate `sleuth` processes sharing one
PostgreSQL (a fresh schema) and one Redis (a fresh key prefix), with the scripted model."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis

from sleuth_testkit.databases import fresh_schema
from sleuth_testkit.model import ScriptedLLM
from support.processes import ServerProcess, WorkerProcess

# Scale-out needs PostgreSQL and Redis whichever store the rest of the run uses (scripts/services
# makes sure both answer).
DATABASE_URL = os.environ.get("SLEUTH_TEST_DATABASE_URL", "").strip() or "postgresql://postgres@127.0.0.1:5432/test"
REDIS_URL = os.environ.get("SLEUTH_TEST_REDIS_URL", "").strip() or "redis://127.0.0.1:6379/0"
# Long enough that a process starved by a loaded machine keeps its leases; the tests of what happens
# when a lease lapses set their own (`EXPIRING_LEASE_S`), and wait that long for it.
LEASE_S = 6.0
EXPIRING_LEASE_S = "3"  # renewed every second: a worker starved for three keeps it


@dataclass
class Cluster:
    env: dict[str, str]
    prefix: str
    logs: Path
    servers: list[ServerProcess] = field(default_factory=list)
    workers: list[WorkerProcess] = field(default_factory=list)

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(REDIS_URL, decode_responses=True)

    def holder_pid(self, run_id: str) -> int | None:
        """The pid of the worker holding the run's lease (`host:pid`)."""
        with self.redis() as client:
            holder = client.get(f"{self.prefix}:run:{run_id}:lease")
        return int(str(holder).rsplit(":", 1)[1]) if holder else None

    def worker_by_pid(self, pid: int) -> WorkerProcess:
        return next(worker for worker in self.workers if worker.pid == pid)

    def stop(self) -> None:
        for process in [*self.workers, *self.servers]:
            process.stop(signal.SIGTERM)


@contextmanager
def cluster(
    llm: ScriptedLLM, logs: Path, *, servers: int = 2, workers: int = 2, concurrency: int = 2, **settings: str
) -> Iterator[Cluster]:
    prefix = f"sleuth-test-{uuid.uuid4().hex[:10]}"
    with ExitStack() as stack:
        url = stack.enter_context(fresh_schema(DATABASE_URL))
        env = {
            **os.environ,
            "SLEUTH_MODEL": "openai/scripted",
            "SLEUTH_API_BASE": llm.base_url,
            "SLEUTH_API_KEY": "sk-test-secret",
            "SLEUTH_LLM_BACKOFF_BASE_S": "0.01",
            "SLEUTH_HEARTBEAT_S": "0.5",
            "SLEUTH_DATABASE_URL": url,
            "SLEUTH_REDIS_URL": REDIS_URL,
            "SLEUTH_REDIS_PREFIX": prefix,
            "SLEUTH_RUN_LEASE_S": str(LEASE_S),
            **settings,
        }
        logs.mkdir(parents=True, exist_ok=True)
        stack.callback(_drop_keys, prefix)
        running = Cluster(env, prefix, logs)
        stack.callback(running.stop)
        # The first process creates the queue's tables; the others find them, and start together.
        for index in range(workers):
            log = logs / f"worker-{index}.log"
            running.workers.append(WorkerProcess(env, log, concurrency=concurrency, wait=index == 0))
        for index in range(servers):
            running.servers.append(ServerProcess(env, logs / f"server-{index}.log", wait=not running.workers))
        for process in [*running.workers[1:], *running.servers]:
            process.ready()
        yield running


def _drop_keys(prefix: str) -> None:
    with redis.Redis.from_url(REDIS_URL) as client:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
