"""SSE: full runs equal the store, resume with Last-Event-ID at many cut points, several watchers."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest

from conftest import LiveServer, assert_contiguous, read_events, start_research
from sleuth.stream.packets import parse_packet
from support.invariants import check_invariants


@pytest.fixture
def server(shared_server: LiveServer) -> LiveServer:
    """Every test here reads only its own run, so they share one server."""
    return shared_server


async def test_full_run_streams_exactly_the_stored_packets(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client)
        events = await read_events(client, run_id)
        run = (await client.get(f"/api/runs/{run_id}")).json()
    assert_contiguous(events)
    packets = [parse_packet(e.data) for e in events]
    check_invariants(packets)
    assert packets[-1].obj.type == "stop" and packets[-1].obj.reason == "completed"
    assert [e.data for e in events] == server.stored_packets(run_id)
    assert run["status"] == "completed" and run["report_id"]
    # the SSE `data` is the packet JSON, its `id` the packet's seq
    assert all(json.loads(e.data)["seq"] == e.seq and json.loads(e.data)["run_id"] == run_id for e in events)


async def test_resume_after_disconnect_at_random_packets_while_live(server: LiveServer) -> None:
    """A client that keeps dropping the connection and resuming sees every packet exactly once."""
    rng = random.Random(4)
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client)
        seen: list = []
        cuts = 0
        while not seen or seen[-1].type != "stop":
            last = seen[-1].seq if seen else None
            seen += await read_events(client, run_id, last_event_id=last, limit=rng.randint(1, 25))
            cuts += 1
        stored = server.stored_packets(run_id)
    assert cuts > 5
    assert_contiguous(seen)
    assert [e.data for e in seen] == stored


async def test_resume_at_every_kind_of_cut_point_of_a_finished_run(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client)
        full = await read_events(client, run_id)
        last = full[-1].seq
        cut_points = sorted({-1, 0, 1, last - 1, last, *random.Random(7).sample(range(last), min(40, last))})
        for cut in cut_points:
            resumed = await read_events(client, run_id, last_event_id=cut)
            assert [e.seq for e in resumed] == list(range(cut + 1, last + 1)), f"cut after {cut}"
            assert [e.data for e in resumed] == [e.data for e in full[cut + 1 :]]
        # `?after=` does the same for clients that cannot set headers
        response = await client.get(f"/api/runs/{run_id}/events", params={"after": last - 1})
        assert response.text.count("event: packet") == 1


async def test_two_clients_see_identical_streams_and_a_late_joiner_catches_up(server: LiveServer) -> None:
    async with (
        httpx.AsyncClient(base_url=server.base_url, timeout=60) as a,
        httpx.AsyncClient(base_url=server.base_url, timeout=60) as b,
    ):
        run_id = await start_research(a)
        first, second = await asyncio.gather(read_events(a, run_id), read_events(b, run_id))
        # a third client joins after the run is over and replays from the store
        late = await read_events(a, run_id)
    assert [e.data for e in first] == [e.data for e in second] == [e.data for e in late]
    assert_contiguous(first)


async def test_a_closed_browser_does_not_stop_the_run(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client)
        head = await read_events(client, run_id, limit=3)  # then the connection closes
        assert len(head) == 3
        rest = await read_events(client, run_id, last_event_id=head[-1].seq)
    assert rest[-1].type == "stop"
    assert json.loads(rest[-1].data)["obj"]["reason"] == "completed"
    assert_contiguous(head + rest)


async def test_heartbeats_while_quiet(hanging_server: LiveServer) -> None:
    """The run hangs in the orchestrator; the stream stays open and sends comment heartbeats."""
    async with httpx.AsyncClient(base_url=hanging_server.base_url, timeout=30) as client:
        run_id = await start_research(client, clarify=False)
        await read_events(client, run_id, until_type="plan_done")
        async with client.stream("GET", f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "0"}) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            seen = b""
            async for chunk in response.aiter_bytes():
                seen += chunk
                if b": heartbeat\n" in seen:
                    break
        assert b"id: 1\n" in seen and b"id: 0\n" not in seen
        await client.post(f"/api/runs/{run_id}/cancel")
