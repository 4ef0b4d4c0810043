"""Hostile uploads over HTTP (a real uvicorn): crafted PDFs, a file that takes too long or too much
memory to extract, more uploads than the server extracts at once, and uploads racing a delete."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conftest import LiveServer, live_server
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.pdf import deep_page_tree_pdf, deflate_bomb_pdf, operator_stream_pdf, shared_stream_pdf

TIGHT_TIMEOUT_S = 3
TIGHT_MEMORY_MB = 60  # past what the parsers need for one ordinary stream, short of the bomb


def files(*items: tuple[str, bytes]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("files", (name, data, "application/octet-stream")) for name, data in items]


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server that extracts one upload at a time, each file within 3 s and 60 MB."""
    settings: dict[str, Any] = {
        "upload_extract_timeout_s": TIGHT_TIMEOUT_S,
        "upload_extract_memory_mb": TIGHT_MEMORY_MB,
        "upload_max_concurrent": 1,
    }
    with (
        ScriptedLLM(ResearchModel()) as llm,
        live_server(scripted_settings(llm, data_dir=tmp_path_factory.mktemp("tight"), **settings)) as live,
    ):
        yield live


async def paths(client: httpx.AsyncClient, collection: str) -> list[str]:
    return [d["path"] for d in (await client.get(f"/api/collections/{collection}/documents")).json()]


async def test_crafted_pdfs_are_refused_each_with_its_reason(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=300) as client:
        for name, data, limit in [
            ("bomb.pdf", deflate_bomb_pdf(), "Limit reached while decompressing"),
            ("deep.pdf", deep_page_tree_pdf(), "Maximum page tree depth reached: 101 > 100"),
        ]:
            alone = await client.post("/api/collections/kb/documents", files=files((name, data)))
            assert alone.status_code == 422, alone.text
            reason = f"refused: the PDF goes past a safety limit of the reader ({limit}"
            assert alone.json()["detail"].startswith(f"{name}: {reason}")
            (refusal,) = alone.json()["refused"]
            assert (refusal["filename"], refusal["status"]) == (name, 422) and refusal["reason"].startswith(reason)
        mixed = await client.post(
            "/api/collections/kb/documents",
            files=files(("good.md", b"# Good\n\nThe okapi is shy.\n"), ("ops.pdf", operator_stream_pdf())),
        )
        assert mixed.status_code == 201, mixed.text
        assert [d["path"] for d in mixed.json()["added"]] == ["good.md"]
        (refusal,) = mixed.json()["refused"]
        assert refusal["filename"] == "ops.pdf" and refusal["status"] == 422
        assert "safety limit of the reader (Reached maximum number of tokens per stream" in refusal["reason"]
        assert await paths(client, "kb") == ["good.md"]


async def test_a_file_that_takes_too_long_is_refused_at_the_deadline(tight: LiveServer) -> None:
    # A few hundred kilobytes whose 2000 pages each parse one stream of 50,000 operators again:
    # without a deadline, a long stretch of a server's CPU.
    async with httpx.AsyncClient(base_url=tight.base_url, timeout=120) as client:
        slow = await client.post("/api/collections/slow/documents", files=files(("slow.pdf", shared_stream_pdf())))
        assert slow.status_code == 422, slow.text
        assert slow.json()["detail"] == f"slow.pdf: took longer than {TIGHT_TIMEOUT_S} s to extract; refused"
        fine = await client.post("/api/collections/slow/documents", files=files(("fine.md", b"# Fine\n\nStill up.\n")))
        assert fine.status_code == 201, fine.text


async def test_a_file_that_needs_too_much_memory_is_refused(tight: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=tight.base_url, timeout=120) as client:
        bomb = await client.post("/api/collections/mem/documents", files=files(("bomb.pdf", deflate_bomb_pdf())))
    assert bomb.status_code == 422, bomb.text
    assert bomb.json()["detail"] == f"bomb.pdf: needs more than {TIGHT_MEMORY_MB} MB of memory to extract; refused"


async def test_uploads_past_the_concurrent_extractions_get_429(tight: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=tight.base_url, timeout=120) as client:

        def upload_slow() -> asyncio.Task[httpx.Response]:
            pdf = files(("slow.pdf", shared_stream_pdf()))
            return asyncio.create_task(client.post("/api/collections/busy/documents", files=pdf))

        slow = upload_slow()
        busy = None
        for attempt in range(500):  # until a note comes while the slow upload holds the one slot (for 3 s)
            note = files((f"n{attempt}.md", b"# Note\n\nA note.\n"))
            response = await client.post("/api/collections/other/documents", files=note)
            if response.status_code == 429:
                busy = response
                break
            assert response.status_code == 201, response.text
            if slow.done():  # a note had the slot when the slow upload came: it was refused, so again
                assert (await slow).status_code == 429
                slow = upload_slow()
        assert busy is not None, "no upload was refused while another was extracted"
        assert busy.headers["Retry-After"] == "5"
        assert busy.json()["detail"] == "the server is extracting its maximum of 1 uploads; retry later"
        assert (await slow).status_code == 422
        after = await client.post("/api/collections/other/documents", files=files(("after.md", b"# After\n\nOk.\n")))
        assert after.status_code == 201, after.text


async def test_an_upload_racing_a_collection_delete_never_gets_a_500(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        for i in range(50):
            first = await client.post("/api/collections/race/documents", files=files(("a.md", b"# A\n\nFirst.\n")))
            assert first.status_code == 201, first.text
            upload, delete = await asyncio.gather(
                client.post("/api/collections/race/documents", files=files((f"b{i}.md", b"# B\n\nSecond.\n"))),
                client.delete("/api/collections/race"),
            )
            assert upload.status_code in (201, 409), upload.text
            assert delete.status_code in (204, 404), delete.text
            if upload.status_code == 409:
                assert upload.json()["detail"] == (
                    "collection 'race' was deleted while the files were read; nothing was added"
                )
            # Whatever the order, the collection is gone or holds what the upload said it added.
            listed = await client.get("/api/collections/race/documents")
            if listed.status_code == 200:
                assert [d["path"] for d in listed.json()] == [f"b{i}.md"]
                assert (await client.delete("/api/collections/race")).status_code == 204
            else:
                assert listed.status_code == 404
