"""Sessions management: rename, search by title, delete with everything the session owns."""

from __future__ import annotations

import httpx

from conftest import LiveServer, read_events, start_research
from support.databases import table_columns


def _rows_mentioning(server: LiveServer, session_id: str, run_id: str, report_id: str) -> dict[str, int]:
    """Rows left anywhere in the database that belong to the session, its run or its report."""
    database = server.database
    left: dict[str, int] = {}
    for table, columns in table_columns(database).items():
        checks = [(c, v) for c, v in (("session_id", session_id), ("run_id", run_id), ("report_id", report_id))]
        checks += [("id", session_id), ("id", run_id), ("id", report_id)]
        count = 0
        for column, value in checks:
            if column in columns:
                row = database.fetch_one(f"SELECT COUNT(*) AS n FROM {table} WHERE {column} = ?", (value,))
                count += row["n"] if row else 0
        if count:
            left[table] = count
    return left


async def test_rename_search_and_delete_leaves_nothing_behind(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        run_id = await start_research(client, clarify=False)
        events = await read_events(client, run_id)
        run = (await client.get(f"/api/runs/{run_id}")).json()
        session_id, report_id = run["session_id"], run["report_id"]
        other = await start_research(client, "What does the yield statement do?", clarify=False)
        await read_events(client, other)

        renamed = await client.patch(f"/api/sessions/{session_id}", json={"title": "  Descriptor   notes  "})
        found = (await client.get("/api/sessions", params={"q": "DESCRIPTOR"})).json()
        not_found = (await client.get("/api/sessions", params={"q": "100%_"})).json()
        everything = (await client.get("/api/sessions")).json()
        assert _rows_mentioning(server, session_id, run_id, report_id)  # the check sees rows when they exist

        deleted = await client.delete(f"/api/sessions/{session_id}")
        gone = await client.get(f"/api/sessions/{session_id}")
        report = await client.get(f"/api/reports/{report_id}")
        replay = await client.get(f"/api/runs/{run_id}")
        again = await client.delete(f"/api/sessions/{session_id}")
        remaining = (await client.get("/api/sessions")).json()
    assert events[-1].type == "stop"
    assert renamed.status_code == 200 and renamed.json()["title"] == "Descriptor notes"
    assert [s["id"] for s in found] == [session_id]
    assert not_found == []  # % and _ are literal characters, not wildcards
    assert len(everything) == 2
    assert deleted.status_code == 204
    assert gone.status_code == 404 and report.status_code == 404 and replay.status_code == 404
    assert again.status_code == 404
    assert [s["title"] for s in remaining] == ["What does the yield statement do?"]
    assert _rows_mentioning(server, session_id, run_id, report_id) == {}


async def test_bad_session_edits_are_refused(hanging_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=hanging_server.base_url, timeout=60) as client:
        missing = await client.patch("/api/sessions/s_missing", json={"title": "x"})
        run_id = await start_research(client, clarify=False)
        await read_events(client, run_id, until_type="plan_done")
        session_id = (await client.get(f"/api/runs/{run_id}")).json()["session_id"]
        blank = await client.patch(f"/api/sessions/{session_id}", json={"title": "   "})
        busy = await client.delete(f"/api/sessions/{session_id}")
        still = await client.get(f"/api/sessions/{session_id}")
        await client.post(f"/api/runs/{run_id}/cancel")
    assert missing.status_code == 404
    assert blank.status_code == 422
    assert busy.status_code == 409 and "cancel it first" in busy.json()["detail"]
    assert still.status_code == 200  # nothing was deleted
