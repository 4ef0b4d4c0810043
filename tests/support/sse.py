"""Reading a run's packet stream over real HTTP, for tests in any folder."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import aconnect_sse

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


@dataclass
class Event:
    seq: int
    data: str

    @property
    def type(self) -> str:
        return str(json.loads(self.data)["obj"]["type"])


async def read_events(
    client: httpx.AsyncClient,
    run_id: str,
    *,
    last_event_id: int | None = None,
    limit: int | None = None,
    until_type: str | None = None,
    headers: dict[str, str] | None = None,
) -> list[Event]:
    """Read packets until the server closes the stream, `limit` packets, or a packet of `until_type`."""
    request_headers = dict(headers or {})
    if last_event_id is not None:
        request_headers["Last-Event-ID"] = str(last_event_id)
    events: list[Event] = []
    async with aconnect_sse(client, "GET", f"/api/runs/{run_id}/events", headers=request_headers) as source:
        source.response.raise_for_status()
        async for sse in source.aiter_sse():
            assert sse.event == "packet"
            events.append(Event(int(sse.id), sse.data))
            if (limit is not None and len(events) >= limit) or (until_type and events[-1].type == until_type):
                break
    return events


def document_urls(packets: list[dict[str, Any]]) -> list[str]:
    """The URLs of every document a run's agents found or opened (decoded packets, in order)."""
    return [
        doc["url"]
        for packet in packets
        if packet["obj"]["type"] in ("search_documents", "open_url_documents")
        for doc in packet["obj"]["documents"]
    ]


def assert_contiguous(events: list[Event], start: int = 0) -> None:
    assert [e.seq for e in events] == list(range(start, start + len(events)))


async def start_research(client: httpx.AsyncClient, question: str = QUESTION, **extra: Any) -> str:
    response = await client.post("/api/research", json={"question": question, **extra})
    assert response.status_code == 202, response.text
    return str(response.json()["run_id"])
