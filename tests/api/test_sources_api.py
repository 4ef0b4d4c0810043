"""Sources, collections, uploads, documents and the .md export over HTTP (a real uvicorn, the scripted model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import LiveServer, live_server, read_events, start_research
from sleuth.exports.markdown import report_markdown
from sleuth.store.store import _report_insert
from sleuth.stream.documents import Document, document_id
from sleuth.stream.packets import NumberedSource
from sleuth.stream.results import ResearchResult
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from support.pdf import minimal_pdf
from support.sse import document_urls

SHARED = "The descriptor protocol: __get__ and __set__, __getattr__ fallback, __getattribute__, property, __slots__."


@pytest.fixture
def small_uploads(llm: ScriptedLLM) -> Iterator[LiveServer]:
    settings = scripted_settings(llm, upload_max_file_mb=0.01, upload_max_files=3, upload_max_request_mb=0.025)
    with live_server(settings) as live:
        yield live


def files(*items: tuple[str, bytes]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("files", (name, data, "application/octet-stream")) for name, data in items]


async def upload_two_collections(client: httpx.AsyncClient) -> None:
    for name in ("alpha", "beta"):
        response = await client.post(
            f"/api/collections/{name}/documents",
            files=files(*((f"{name}{i}.md", f"# {name} {i}\n\n{SHARED} Only in {name}.\n".encode()) for i in range(3))),
        )
        assert response.status_code == 201, response.text


async def test_sources_lists_collections_and_uploads_are_searched_alone(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        await upload_two_collections(client)
        listed = (await client.get("/api/sources")).json()
        by_name = {s["name"]: s for s in listed}
        assert by_name["alpha"] == {
            "name": "alpha",
            "kind": "local",
            "documents": 3,
            "default": True,
            "tools": None,
            "state": None,
            "reason": None,
            "visibility": "everyone",  # uploaded without accounts: no owner
            "editable": True,
        }
        assert by_name["python-reference"]["documents"] > 50
        run_id = await start_research(client, sources=["alpha"], clarify=False)
        events = [json.loads(e.data) for e in await read_events(client, run_id)]
    assert events[0]["obj"]["sources"] == ["alpha"]
    urls = document_urls(events)
    assert urls and all(url.startswith("corpus://alpha/") for url in urls), urls


@pytest.mark.parametrize("route", ["/api/research", "/api/sessions/{session}/messages"])
async def test_unknown_source_is_refused_before_a_run_exists(server: LiveServer, route: str) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        session = (await client.post("/api/sessions", json={})).json()["id"]
        key = "question" if route == "/api/research" else "content"
        response = await client.post(route.format(session=session), json={key: "What?", "sources": ["nope"]})
        assert response.status_code == 400
        assert response.json()["detail"].startswith("research cannot start: unknown source 'nope' (known sources: ")
        empty = await client.post(route.format(session=session), json={key: "What?", "sources": [" "]})
        assert empty.status_code == 400 and "no sources chosen" in empty.json()["detail"]
        sessions = (await client.get("/api/sessions")).json()
        assert [s["id"] for s in sessions] == [session]  # nothing created by the refused calls
        assert (await client.get(f"/api/sessions/{session}")).json()["runs"] == []


async def test_collections_documents_and_deletes(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        up = await client.post(
            "/api/collections/notes/documents",
            files=files(("a.md", b"# Alpha note\n\nAardvarks dig.\n"), ("paper.pdf", minimal_pdf("Quokkas smile"))),
        )
        assert up.status_code == 201 and up.json()["refused"] == []
        added = up.json()["added"]
        assert [(d["path"], d["title"]) for d in added] == [("a.md", "Alpha note"), ("paper.pdf", "Quokkas smile")]
        doc_id = added[0]["id"]
        assert doc_id == document_id("corpus://notes/a.md")
        collections = {c["name"]: c for c in (await client.get("/api/collections")).json()}
        assert collections["notes"]["kind"] == "uploaded" and collections["notes"]["documents"] == 2

        by_id = await client.get(f"/api/documents/{doc_id}")
        assert by_id.status_code == 200
        assert by_id.json() == {
            "id": doc_id,
            "url": "corpus://notes/a.md",
            "title": "Alpha note",
            "collection": "notes",
            "text": "# Alpha note\n\nAardvarks dig.",
            "blocks": [
                {"kind": "heading", "level": 1, "text": "Alpha note"},
                {"kind": "paragraph", "text": "Aardvarks dig.", "depth": 0},
            ],
        }
        by_url = await client.get("/api/documents", params={"url": "corpus://notes/a.md"})
        assert by_url.json() == by_id.json()
        builtin = await client.get("/api/documents", params={"url": "corpus://python-reference/lambda"})
        assert builtin.status_code == 200 and "lambda" in builtin.json()["text"]
        # The viewer reads blocks: pydoc's underlined title is a heading, its grammar is code.
        kinds = {b["kind"]: b for b in reversed(builtin.json()["blocks"])}
        assert kinds["heading"]["text"] == "Lambdas" and "::=" in kinds["code"]["text"]
        assert (await client.get("/api/documents/d_000000000000")).status_code == 404
        missing = await client.get("/api/documents", params={"url": "corpus://notes/none.md"})
        assert missing.status_code == 404
        private = await client.get("/api/documents", params={"url": "http://127.0.0.1:9/secret"})
        assert private.status_code == 422 and "could not open" in private.json()["detail"]
        assert (await client.get("/api/documents", params={"url": "file:///etc/passwd"})).status_code == 422

        assert (await client.delete(f"/api/collections/notes/documents/{doc_id}")).status_code == 204
        assert [d["path"] for d in (await client.get("/api/collections/notes/documents")).json()] == ["paper.pdf"]
        assert (await client.delete(f"/api/collections/notes/documents/{doc_id}")).status_code == 404
        assert (await client.delete("/api/collections/python-reference")).status_code == 409
        assert (await client.delete("/api/collections/notes")).status_code == 204
        assert (await client.get("/api/collections/notes/documents")).status_code == 404
        assert "notes" not in {s["name"] for s in (await client.get("/api/sources")).json()}


async def test_each_file_is_added_or_refused_with_its_reason(small_uploads: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=small_uploads.base_url, timeout=30) as client:
        ok = await client.post("/api/collections/kb/documents", files=files(("keep.md", b"# Keep\n\nkept text\n")))
        assert ok.status_code == 201
        cases = [
            (("image.png", b"\x89PNG"), 415, "file type not supported (supported: .htm, .html, .markdown, .md, .pdf"),
            (("big.txt", b"x " * 6000), 413, "0.0 MB is over the 0.0 MB limit"),
            (("bad.pdf", b"%PDF-1.4 junk"), 422, "could not read the PDF"),
            (("empty.txt", b"  \n"), 422, "no text could be extracted"),
        ]
        for (name, data), code, reason in cases:
            alone = await client.post("/api/collections/kb/documents", files=files((name, data)))
            assert alone.status_code == code, alone.text  # the only file: its own status
            assert alone.json()["detail"].startswith(f"{name}: {reason}"), alone.text
            mixed = await client.post("/api/collections/kb/documents", files=files(("good.md", b"fine"), (name, data)))
            assert mixed.status_code == 201, mixed.text
            assert [d["path"] for d in mixed.json()["added"]] == ["good.md"]
            (refused,) = mixed.json()["refused"]
            assert (refused["filename"], refused["status"]) == (name, code) and refused["reason"].startswith(reason)
        both = await client.post("/api/collections/kb/documents", files=files(*(case[0] for case in cases[:2])))
        assert both.status_code == 422  # refusals of different kinds
        assert [r["status"] for r in both.json()["refused"]] == [415, 413]
        assert (
            both.json()["detail"].startswith("image.png: file type not supported") and "; big.txt: 0.0 MB" in both.text
        )
        assert sorted(d["path"] for d in (await client.get("/api/collections/kb/documents")).json()) == [
            "good.md",
            "keep.md",
        ]

        whole = [
            (files(*((f"n{i}.md", b"x") for i in range(4))), 413, "4 files is over the limit of 3 per upload"),
            (files(("../../etc/x.md", b"fine"), ("x.md", b"dup")), 422, "two files in the upload have the same name"),
        ]
        for payload, code, message in whole:
            response = await client.post("/api/collections/fresh/documents", files=payload)
            assert response.status_code == code, response.text
            assert response.json()["detail"].startswith(message), response.text
        bad_name = await client.post("/api/collections/Bad%20Name/documents", files=files(("a.md", b"x")))
        assert bad_name.status_code == 422 and "invalid collection name" in bad_name.json()["detail"]
        builtin = await client.post("/api/collections/python-reference/documents", files=files(("a.md", b"x")))
        assert builtin.status_code == 409
        assert "fresh" not in {c["name"] for c in (await client.get("/api/collections")).json()}
        too_big = await client.post(
            "/api/collections/kb/documents", content=b"x" * 1_100_000, headers={"Content-Type": "multipart/form-data"}
        )
        assert too_big.status_code == 413
        # Three files each under the 10 kB file limit, together over the 25 kB request limit.
        over = await client.post(
            "/api/collections/kb/documents", files=files(*((f"m{i}.md", b"y" * 9000) for i in range(3)))
        )
        assert over.status_code == 413
        assert not {"m0.md", "m1.md", "m2.md"} & {
            d["path"] for d in (await client.get("/api/collections/kb/documents")).json()
        }


async def test_markdown_export_has_title_sources_and_trailing_newline(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        run_id = await start_research(client, clarify=False)
        events = [json.loads(e.data) for e in await read_events(client, run_id)]
        report = next(p["obj"] for p in events if p["obj"]["type"] == "report")
        response = await client.get(f"/api/reports/{report['report_id']}.md")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    text = response.text
    question = events[0]["obj"]["question"]
    assert text.startswith(f"# {question}\n\n")
    assert report["markdown"].strip() in text
    body, sources = text.split("\n## Sources\n\n")
    assert sources.endswith("\n") and not sources.endswith("\n\n")
    expected = [f"{s['number']}. [{s['title'] or s['url']}](<{s['url']}>)" for s in report["sources"]]
    assert sources.splitlines() == expected and expected


def test_md_export_escapes_titles(tmp_path: Path) -> None:
    source = NumberedSource(id="d_1", url="https://example.org/a b", title="A [weird]\ntitle", number=1)
    text = report_markdown("  What\nis it? ", "Body [1].", [source])
    assert text == "# What is it?\n\nBody [1].\n\n## Sources\n\n1. [A \\[weird\\] title](<https://example.org/a b>)\n"


async def test_a_cited_web_document_opens_by_id_through_the_ssrf_guard(server: LiveServer) -> None:
    url = "http://127.0.0.1:9/private-page"
    source = NumberedSource.model_validate({**Document.from_url(url, title="P").model_dump(), "number": 1})
    result = ResearchResult(
        status="completed", stop_reason="completed", report_id="rep_web", question="q", sources=[source]
    )

    statement, params = _report_insert(result, run_id="run_x", session_id="s_x", created_at="2026-01-01T00:00:00Z")
    server.database.execute(statement, params)
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        response = await client.get(f"/api/documents/{source.id}")
    # Found through the stored report, then refused by the same guard agents use: never fetched.
    assert (
        response.status_code == 422 and "could not open 'http://127.0.0.1:9/private-page'" in response.json()["detail"]
    )
