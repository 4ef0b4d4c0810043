"""What the scale-out tests share: a model that holds a run mid-flight, and reading a run back
from a server or from the store."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg

from sleuth_testkit.model import Reply
from sleuth_testkit.scenarios import ResearchModel, assistant_turns
from support.sse import QUESTION, Event, read_events

TIMEOUT = 60


@dataclass
class GatedOrchestrator(ResearchModel):
    """Researches normally, but its first orchestrator answer waits for `gate`: the run is held
    mid-flight (after its plan) until the test lets it go."""

    gate: threading.Event = field(default_factory=threading.Event)

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        reply = super().orchestrator(body)
        if assistant_turns(body) == 0:
            reply.gate = self.gate
        return reply


def obj(event: Event) -> dict[str, Any]:
    return json.loads(event.data)["obj"]  # type: ignore[no-any-return]


def unstarted(session_id: str) -> dict[str, Any]:
    """The `run_start` of a run that no engine began: what was asked, in the settings' mode."""
    return {
        "type": "run_start",
        "session_id": session_id,
        "question": QUESTION,
        "mode": "heavy",
        "models": {},
        "time_budget_s": None,
        "sources": [],
        "routes": [],
    }


def client_for(base_url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base_url, timeout=TIMEOUT)


async def read_back(base_url: str, run_id: str) -> list[Event]:
    async with client_for(base_url) as client:
        return await read_events(client, run_id)


def stored_packets(env: dict[str, str], run_id: str) -> list[str]:
    with psycopg.connect(env["SLEUTH_DATABASE_URL"]) as conn:
        rows = conn.execute("SELECT json FROM packets WHERE run_id = %s ORDER BY seq", (run_id,)).fetchall()
    return [row[0] for row in rows]
