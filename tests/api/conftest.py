"""A real uvicorn on 127.0.0.1 serving `create_app`, the scripted model, and SSE helpers.

SSE goes over real sockets: httpx's ASGITransport buffers whole responses, so it cannot test
endless streams.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn

from sleuth.api.app import create_app
from sleuth.config import Settings
from sleuth.core.clock import Clock
from sleuth.runs.executor import RunEvents, RunExecutor
from sleuth.runs.manager import Engine
from sleuth.store.database import Database
from sleuth.store.store import Store
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import HangingOrchestrator, ResearchModel
from support.accounts import quick_passwords
from support.sse import QUESTION, Event, assert_contiguous, read_events, start_research

__all__ = ["QUESTION", "Event", "LiveServer", "assert_contiguous", "live_server", "read_events", "start_research"]


@dataclass
class LiveServer:
    base_url: str
    settings: Settings
    server: uvicorn.Server
    thread: threading.Thread
    app_state: Any = None  # the app's `state` (store, manager) for white-box checks

    @property
    def database(self) -> Database:
        """The server's own database (SQLite or PostgreSQL), while it runs."""
        database: Database = self.app_state.store.database
        return database

    def stored_packets(self, run_id: str) -> list[str]:
        rows = self.database.fetch_all("SELECT json FROM packets WHERE run_id = ? ORDER BY seq", (run_id,))
        return [row["json"] for row in rows]


@contextmanager
def live_server(
    settings: Settings,
    *,
    engine: Engine | None = None,
    executor: Callable[[RunEvents], RunExecutor] | None = None,
    clock: Clock | None = None,
) -> Iterator[LiveServer]:
    """`engine`: a module-level stand-in for the research engine (it is sent to the engine process);
    `executor`: where runs execute, instead of the engine processes; `clock`: the sign-in limit's.
    Passwords are hashed at argon2id's lowest cost (`support.accounts`)."""
    app = create_app(settings, engine=engine, executor=executor, passwords=quick_passwords(), clock=clock)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    # uvicorn has no "started" callback: `server.started` flips once the lifespan has run and the
    # socket serves, and a start-up that fails ends `server.run` (the thread). Either ends the wait,
    # however long a loaded machine takes to get there (the lifespan loads litellm: seconds).
    while not server.started and thread.is_alive():
        thread.join(0.01)
    assert server.started, "uvicorn did not start (its log above says why)"
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", settings, server, thread, app.state)
    finally:
        server.should_exit = True
        thread.join(15)


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(ResearchModel()) as scripted:
        yield scripted


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server (and so one engine process start and stop, seconds each) for a whole module whose
    tests read only the runs they start; `server` stays per test where a test needs a fresh store."""
    with (
        ScriptedLLM(ResearchModel()) as scripted,
        live_server(scripted_settings(scripted, data_dir=tmp_path_factory.mktemp("shared"))) as live,
    ):
        yield live


@pytest.fixture
def hanging_llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(HangingOrchestrator()) as scripted:
        yield scripted


@pytest.fixture
def server(llm: ScriptedLLM) -> Iterator[LiveServer]:
    with live_server(scripted_settings(llm)) as live:
        yield live


@pytest.fixture
def hanging_server(hanging_llm: ScriptedLLM) -> Iterator[LiveServer]:
    with live_server(scripted_settings(hanging_llm)) as live:
        yield live


@pytest.fixture
def store() -> Iterator[Store]:
    """The test's store on the configured backend (a fresh SQLite file or PostgreSQL schema)."""
    opened = Store.from_settings(Settings())
    try:
        yield opened
    finally:
        opened.close()
