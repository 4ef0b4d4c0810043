"""One user's research is invisible to another: every route that takes an id answers 404 to another
user for the owner's ids, an administrator included. The routes are read from the app itself, so a
route added later is checked too (or fails here until it is).

The one deliberate exception: an administrator reads another user's research through the admin
routes, and each such read is recorded (the audit table and the server log); everyone else gets 403
there."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from unittest.mock import ANY

import httpx
import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import TextContent

from conftest import LiveServer, live_server, read_events, start_research
from sleuth.accounts.service import Accounts
from sleuth.api.app import create_app
from sleuth.audio.files import audio_dir
from sleuth.config import Settings
from sleuth.store.recovery import this_host
from sleuth.store.store import Store
from sleuth.stream.results import ToolDocument
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.sse import document_urls

# Routes through which an administrator reads a user's research on purpose, each read recorded;
# every route under /api/admin/ that takes a parameter must be listed here (and so checked below).
ADMIN_READS = {
    "/api/admin/users/{name}/sessions",
    "/api/admin/users/{name}/sessions/{session_id}",
}
# Routes where an administrator acts on any user's collection by name (sharing an upload with every
# user is theirs to decide); another user who is not an administrator still finds nothing there.
ADMIN_ACTS = {"/api/collections/{name}/share"}
STATIC = "/{path:path}"  # the web UI's files
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("PATCH", "/api/sessions/{session_id}"): {"title": "taken"},
    ("POST", "/api/sessions/{session_id}/messages"): {"content": "what else?"},
    ("POST", "/api/runs/{run_id}/plan"): {"approve": True},
    ("POST", "/api/reports/{report_id}/audio"): {"style": "narration"},
    ("PATCH", "/api/schedules/{schedule_id}"): {"paused": True},
}
QUERIES: dict[str, dict[str, str]] = {"/api/documents/{doc_id}": {"session_id": "{session_id}"}}
# A collection's document is Alice's upload, not the tool's document the viewer route opens.
PATH_IDS: dict[str, dict[str, str]] = {"/api/collections/{name}/documents/{doc_id}": {"doc_id": "upload_doc_id"}}
NOTE = ("notes.md", b"# Alice's notes\n\nThe descriptor protocol: __get__ and __set__. Zebu graze.\n", "text/markdown")
FILES = {("POST", "/api/collections/{name}/documents"): [("files", NOTE)]}


def _routes_with_parameters() -> list[tuple[str, str, Any]]:
    """(method, path, route) of every route of the app whose path takes a parameter."""
    app = create_app(Settings())
    found = []
    for context in iter_route_contexts(app.routes):  # the full paths of routes of included routers
        if "{" in context.path:
            found += [(method, context.path, context.route) for method in sorted(context.methods or ())]
    return found


def routes_with_ids() -> list[tuple[str, str]]:
    """(method, path) of every route of the app whose path takes a user's id."""
    found = []
    for method, path, route in _routes_with_parameters():
        if path == STATIC or path in ADMIN_READS:
            continue
        assert isinstance(route, APIRoute), f"{path}: check by hand how it finds its caller"
        found.append((method, path))
    # Deletions last: should one go through, what the others are checked on would be gone.
    return sorted(found, key=lambda route: route[0] == "DELETE")


@dataclass
class Owned:
    """Alice's research, and the keys of alice, bob and root (an administrator)."""

    ids: dict[str, str]
    alice: str
    bob: str
    root: str


def accounts(live: LiveServer) -> Accounts:
    found: Accounts = live.app_state.accounts
    return found


@pytest.fixture(scope="module")
def accounts_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with (
        ScriptedLLM(ResearchModel()) as llm,
        live_server(
            scripted_settings(
                llm,
                auth="accounts",
                data_dir=tmp_path_factory.mktemp("isolation"),
                schedule_tick_s=0.05,  # a schedule made due fires at once (its owner's, on the server's own store)
                schedule_jitter_s=0,
            )
        ) as live,
    ):
        yield live


@pytest.fixture(scope="module")
def owned(accounts_server: LiveServer) -> Owned:
    return asyncio.run(_alices_research(accounts_server))


async def _alices_research(live: LiveServer) -> Owned:
    alice, _ = accounts(live).add_user("alice", "alice's password", admin=True)
    bob, _ = accounts(live).add_user("bob", "bob's password!", admin=False)
    root, _ = accounts(live).add_user("root", "root's password", admin=True)
    alice_key = accounts(live).new_key(alice.id, "tests", expires_in_days=None)
    bob_key = accounts(live).new_key(bob.id, "tests", expires_in_days=None).key
    root_key = accounts(live).new_key(root.id, "tests", expires_in_days=None).key
    async with httpx.AsyncClient(base_url=live.base_url, timeout=120, headers=_bearer(alice_key.key)) as client:
        uploaded = await client.post("/api/collections/alice-notes/documents", files=[("files", NOTE)])
        assert uploaded.status_code == 201, uploaded.text
        run_id = await start_research(client, clarify=False, mode="light")
        assert (await read_events(client, run_id))[-1].type == "stop"
        run = (await client.get(f"/api/runs/{run_id}")).json()
        created = await client.post("/api/schedules", json={"question": "What is new?", "every": "24h"})
        assert created.status_code == 201, created.text
        schedule = created.json()
    store: Store = live.app_state.store
    report_id, session_id = run["report_id"], run["session_id"]
    audio_id = store.create_audio("a_alice", report_id, session_id, "narration", owner_host=this_host(), owner_pid=1)
    audio_dir(store).mkdir(parents=True, exist_ok=True)
    (audio_dir(store) / f"{audio_id}.mp3").write_bytes(b"ID3")
    store.finish_audio(audio_id, error=None, media_type="audio/mpeg", duration_s=1.0)
    store.keep_tool_document(run_id, session_id, ToolDocument(id="d_tool", url="mcp://n/read", title="n", text="t"))
    ids = {
        "session_id": session_id,
        "run_id": run_id,
        "report_id": report_id,
        "audio_id": audio_id,
        "key_id": alice_key.record.id,
        "doc_id": "d_tool",
        "schedule_id": schedule["id"],
        "schedule_session_id": schedule["session_id"],
        "name": "alice-notes",  # a private collection
        "upload_doc_id": uploaded.json()["added"][0]["id"],
    }
    return Owned(ids, alice_key.key, bob_key, root_key)


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _request(method: str, path: str, ids: dict[str, str]) -> dict[str, Any]:
    params = {name: value.format(**ids) for name, value in QUERIES.get(path, {}).items()}
    body = BODIES.get((method, path))
    in_path = ids | {name: ids[key] for name, key in PATH_IDS.get(path, {}).items()}
    url = path.format(**in_path)
    return {"method": method, "url": url, "params": params, "json": body, "files": FILES.get((method, path))}


def test_every_route_with_an_id_is_checked_here() -> None:
    checked = routes_with_ids()
    assert ("GET", "/api/runs/{run_id}/events") in checked and ("DELETE", "/api/keys/{key_id}") in checked
    for _, path in checked:
        assert all(f"{{{name}}}" not in path or name in _IDS for name in _names(path)), path
    admin = {(method, path) for method, path, _ in _routes_with_parameters() if path.startswith("/api/admin/")}
    assert admin == {("GET", path) for path in ADMIN_READS}


_IDS = {"session_id", "run_id", "report_id", "audio_id", "key_id", "doc_id", "schedule_id", "name"}


def _names(path: str) -> list[str]:
    return [part.split("}")[0] for part in path.split("{")[1:]]


@pytest.mark.parametrize(("method", "path"), routes_with_ids())
async def test_another_users_ids_are_not_found(
    accounts_server: LiveServer, owned: Owned, method: str, path: str
) -> None:
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=60) as client:
        if method == "GET":  # the ids are right: their owner reads them
            mine = await client.request(**_request(method, path, owned.ids), headers=_bearer(owned.alice))
            assert mine.status_code == 200, (path, mine.text)
        # An administrator reads others' research only through /api/admin.
        others = (owned.bob,) if path in ADMIN_ACTS else (owned.bob, owned.root)
        for other in others:
            theirs = await client.request(**_request(method, path, owned.ids), headers=_bearer(other))
            assert theirs.status_code == 404, (method, path, theirs.status_code, theirs.text)


async def test_streams_resumed_and_lists_show_nothing_of_another_user(
    accounts_server: LiveServer, owned: Owned
) -> None:
    ids = owned.ids
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=60, headers=_bearer(owned.bob)) as bob:
        resumed = await bob.get(f"/api/runs/{ids['run_id']}/events", headers={"Last-Event-ID": "0"})
        assert resumed.status_code == 404
        assert (await bob.get(f"/api/runs/{ids['run_id']}/events", params={"after": 0})).status_code == 404
        assert (await bob.get("/api/sessions")).json() == []
        assert (await bob.get("/api/schedules")).json() == []
        by_url = await bob.get("/api/documents", params={"url": "mcp://n/read", "session_id": ids["session_id"]})
        assert by_url.status_code == 404
        assert ids["key_id"] not in [k["id"] for k in (await bob.get("/api/keys")).json()]
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=60, headers=_bearer(owned.alice)) as alice:
        mine = {s["id"] for s in (await alice.get("/api/sessions")).json()}
        assert mine == {ids["session_id"], ids["schedule_session_id"]}
        assert [s["id"] for s in (await alice.get("/api/schedules")).json()] == [ids["schedule_id"]]
        replay = await read_events(alice, ids["run_id"], last_event_id=0)
        assert replay and replay[0].seq == 1


async def test_mcp_over_http_serves_each_user_their_own_reports(accounts_server: LiveServer, owned: Owned) -> None:
    report_id = owned.ids["report_id"]
    texts = {}
    searches: dict[str, list[Any]] = {}
    for who, key in (("alice", owned.alice), ("bob", owned.bob)):
        async with (
            create_mcp_http_client(headers=_bearer(key)) as http,
            Client(streamable_http_client(f"{accounts_server.base_url}/mcp", http_client=http)) as client,
        ):
            result = await client.call_tool("get_report", {"report_id": report_id})
            listed = [r.name for r in (await client.list_resources()).resources]
            content = result.content[0]
            assert isinstance(content, TextContent)
            texts[who] = (bool(result.is_error), content.text, report_id in listed)
            found = await client.call_tool("quick_search", {"query": "zebu graze"})
            named = await client.call_tool("quick_search", {"query": "zebu", "sources": ["alice-notes"]})
            sources = await client.call_tool("list_sources", {})
            searches[who] = [_text(found), bool(named.is_error), _text(named), "alice-notes" in _text(sources)]
    assert texts["alice"][0] is False and texts["alice"][2] is True
    assert texts["bob"][0] is True and texts["bob"][2] is False and "# " not in texts["bob"][1]
    assert "corpus://alice-notes/notes.md" in searches["alice"][0] and searches["alice"][1:] == [False, ANY, True]
    assert "alice-notes" not in searches["bob"][0] and searches["bob"][1] is True
    assert "unknown source 'alice-notes'" in searches["bob"][2] and searches["bob"][3] is False
    async with httpx.AsyncClient(base_url=accounts_server.base_url) as anon:
        refused = await anon.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert refused.status_code == 401


def _text(result: Any) -> str:
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


async def test_the_chat_api_answers_as_its_caller(accounts_server: LiveServer, owned: Owned) -> None:
    body = {"model": "sleuth-light", "messages": [{"role": "user", "content": "What are descriptors?"}]}
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=120, headers=_bearer(owned.bob)) as bob:
        answered = await bob.post("/v1/chat/completions", json=body)
        assert answered.status_code == 200, answered.text
        named = await bob.post("/v1/chat/completions", json=body | {"sleuth": {"sources": ["alice-notes"]}})
        assert named.status_code == 400 and "unknown source 'alice-notes'" in named.text
        sessions = (await bob.get("/api/sessions")).json()
    assert len(sessions) == 1 and sessions[0]["id"] != owned.ids["session_id"]  # the run is bob's
    async with httpx.AsyncClient(base_url=accounts_server.base_url) as anon:
        assert (await anon.post("/v1/chat/completions", json=body)).status_code == 401
    assert json.loads(answered.text)["choices"][0]["message"]["content"]


def _audit(live: LiveServer) -> list[dict[str, Any]]:
    rows = live.database.fetch_all("SELECT * FROM admin_audit ORDER BY rowid", ())
    return [dict(row) for row in rows]


def _audit_log(live: LiveServer) -> list[dict[str, Any]]:
    lines = (live.settings.data_dir / "logs" / "sleuth.jsonl").read_text().splitlines()
    return [line for line in map(json.loads, lines) if line["logger"] == "sleuth.audit"]


async def test_an_administrator_reads_anothers_research_only_through_recorded_reads(
    accounts_server: LiveServer, owned: Owned
) -> None:
    ids = owned.ids
    recorded, logged = len(_audit(accounts_server)), len(_audit_log(accounts_server))
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=60, headers=_bearer(owned.root)) as root:
        listed = await root.get("/api/admin/users/alice/sessions")
        assert listed.status_code == 200, listed.text
        assert {s["id"] for s in listed.json()} == {ids["session_id"], ids["schedule_session_id"]}
        read = await root.get(f"/api/admin/users/alice/sessions/{ids['session_id']}")
        assert read.status_code == 200, read.text
        session = read.json()
        assert session["owner"] == "alice" and [r["id"] for r in session["runs"]] == [ids["run_id"]]
        assert [m["role"] for m in session["messages"]] == ["user", "assistant"]
        assert [r["report_id"] for r in session["reports"]] == [ids["report_id"]] and session["reports"][0]["markdown"]
        # Only as its owner: alice's session is not bob's, and a user must exist.
        assert (await root.get(f"/api/admin/users/bob/sessions/{ids['session_id']}")).status_code == 404
        assert (await root.get("/api/admin/users/nobody/sessions")).status_code == 404
        audit = (await root.get("/api/admin/audit")).json()
    new = [(r["admin_name"], r["user_name"], r["action"], r["session_id"]) for r in _audit(accounts_server)[recorded:]]
    assert new == [
        ("root", "alice", "list_sessions", None),
        ("root", "alice", "read_session", ids["session_id"]),
        ("root", "bob", "read_session", ids["session_id"]),  # asked for, though not found
    ]
    assert [(a["admin"], a["user"], a["action"], a["session_id"]) for a in audit[:3]] == new[::-1]  # newest first
    lines = _audit_log(accounts_server)[logged:]
    assert [(line["admin"], line["user"], line["action"], line["session_id"]) for line in lines] == new
    assert not any(key in json.dumps(lines) for key in (owned.root, owned.alice))


async def test_only_administrators_read_others_research_or_the_audit(accounts_server: LiveServer, owned: Owned) -> None:
    recorded = len(_audit(accounts_server))
    ids = {**owned.ids, "name": "alice"}
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=60, headers=_bearer(owned.bob)) as bob:
        for path in [*sorted(ADMIN_READS), "/api/admin/audit"]:
            refused = await bob.get(path.format(**ids))
            assert refused.status_code == 403 and refused.json() == {"detail": "administrators only"}, path
    assert len(_audit(accounts_server)) == recorded


async def test_a_private_collection_is_searched_listed_and_read_by_its_owner_alone(
    accounts_server: LiveServer, owned: Owned
) -> None:
    ids = owned.ids
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=120, headers=_bearer(owned.bob)) as bob:
        assert "alice-notes" not in [s["name"] for s in (await bob.get("/api/sources")).json()]
        assert "alice-notes" not in [c["name"] for c in (await bob.get("/api/collections")).json()]
        by_url = await bob.get("/api/documents", params={"url": "corpus://alice-notes/notes.md"})
        assert by_url.status_code == 404
        named = await bob.post("/api/research", json={"question": "Zebu?", "sources": ["alice-notes"]})
        assert named.status_code == 400, named.text
        assert named.json()["detail"].startswith("research cannot start: unknown source 'alice-notes' (known sources: ")
        assert "alice-notes" not in named.json()["detail"].split("known sources:")[1]
        theirs = [json.loads(e.data) for e in await read_events(bob, await start_research(bob, clarify=False))]
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=120, headers=_bearer(owned.alice)) as alice:
        listed = {s["name"]: s for s in (await alice.get("/api/sources")).json()}
        mine = [
            json.loads(e.data) for e in await read_events(alice, await start_research(alice, sources=["alice-notes"]))
        ]
        opened = await alice.get(f"/api/documents/{ids['upload_doc_id']}")
    # Bob's run neither names Alice's collection nor finds anything in it; Alice's searches it.
    assert "alice-notes" not in theirs[0]["obj"]["sources"]
    assert "alice-notes" not in [route["name"] for route in theirs[0]["obj"]["routes"]]
    assert not [url for url in document_urls(theirs) if url.startswith("corpus://alice-notes/")]
    assert theirs[-1]["obj"] == {"type": "stop", "reason": "completed"}
    urls = document_urls(mine)
    assert urls and all(url.startswith("corpus://alice-notes/") for url in urls), urls
    assert (listed["alice-notes"]["visibility"], listed["alice-notes"]["editable"]) == ("private", True)
    assert listed["python-reference"]["visibility"] == "everyone" and listed["python-reference"]["editable"] is False
    assert opened.status_code == 200 and "Zebu graze" in opened.json()["text"]


async def test_any_user_uploads_privately_and_an_administrator_shares_read_only(
    accounts_server: LiveServer, owned: Owned
) -> None:
    bob_notes = ("bob.md", b"# Bob's notes\n\nGaurs browse.\n", "text/markdown")
    alice_shared = ("team.md", b"# Team notes\n\nThe descriptor protocol: __get__. Yaks climb.\n", "text/markdown")
    base = accounts_server.base_url
    async with (
        httpx.AsyncClient(base_url=base, timeout=60, headers=_bearer(owned.bob)) as bob,
        httpx.AsyncClient(base_url=base, timeout=60, headers=_bearer(owned.alice)) as alice,
    ):
        assert (await bob.post("/api/collections/bob-notes/documents", files=[("files", bob_notes)])).status_code == 201
        assert (await alice.get("/api/collections/bob-notes/documents")).status_code == 404  # admins too
        refused = await bob.post("/api/collections/bob-notes/share")
        assert refused.status_code == 403 and refused.json() == {"detail": "administrators only"}
        up = await alice.post("/api/collections/team/documents", files=[("files", alice_shared)])
        assert up.status_code == 201, up.text
        doc_id = up.json()["added"][0]["id"]
        assert (await bob.get("/api/collections/team/documents")).status_code == 404
        shared = await alice.post("/api/collections/team/share")
        assert shared.status_code == 200, shared.text
        assert (shared.json()["visibility"], shared.json()["editable"]) == ("shared", True)
        listed = {s["name"]: s for s in (await bob.get("/api/sources")).json()}
        assert (listed["team"]["visibility"], listed["team"]["editable"]) == ("shared", False)
        assert (await bob.get(f"/api/documents/{doc_id}")).json()["text"].endswith("Yaks climb.")
        searched = await start_research(bob, sources=["team"], clarify=False)
        assert [url for url in document_urls([json.loads(e.data) for e in await read_events(bob, searched)])]
        for method, path, files in [
            ("POST", "/api/collections/team/documents", [("files", bob_notes)]),
            ("DELETE", f"/api/collections/team/documents/{doc_id}", None),
            ("DELETE", "/api/collections/team", None),
        ]:
            read_only = await bob.request(method, path, files=files)
            assert read_only.status_code == 403, (path, read_only.text)
            assert "read-only to you: it is another user's, shared read-only" in read_only.json()["detail"]
        # An administrator shares another user's upload without seeing it first, and unshares it.
        assert (await alice.post("/api/collections/bob-notes/share")).json()["visibility"] == "shared"
        assert (await alice.get("/api/collections/bob-notes/documents")).status_code == 200
        assert (await alice.delete("/api/collections/bob-notes/share")).json()["visibility"] == "private"
        assert (await alice.get("/api/collections/bob-notes/documents")).status_code == 404
        assert (await alice.post("/api/collections/python-reference/share")).status_code == 409
        unshared = await alice.delete("/api/collections/team/share")
        assert unshared.json()["visibility"] == "private"
        assert (await bob.get(f"/api/documents/{doc_id}")).status_code == 404


async def test_the_scheduler_runs_a_schedule_as_its_owner(accounts_server: LiveServer, owned: Owned) -> None:
    async with httpx.AsyncClient(base_url=accounts_server.base_url, timeout=60, headers=_bearer(owned.bob)) as bob:
        created = (await bob.post("/api/schedules", json={"question": "What grazes?", "every": "1h"})).json()
        accounts_server.database.execute(
            "UPDATE schedules SET next_due_at = ? WHERE id = ?", ("2000-01-01T00:00:00.000+00:00", created["id"])
        )
        async with asyncio.timeout(30):
            while not (firings := (await bob.get(f"/api/schedules/{created['id']}")).json()["firings"]):
                await asyncio.sleep(0.05)  # the scheduler runs in the server: only its effect is observable
        events = [json.loads(e.data) for e in await read_events(bob, firings[0]["run_id"])]
    # The scheduler sees every schedule; the run it starts searches what Bob sees, not all there is.
    assert "alice-notes" not in events[0]["obj"]["sources"]
    assert not [url for url in document_urls(events) if url.startswith("corpus://alice-notes/")]
    assert events[-1]["obj"] == {"type": "stop", "reason": "completed"}
