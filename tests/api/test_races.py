"""Requests racing each other over one session: never a 500, and the store stays whole.

Each race runs RACES times against a real server, its requests sent at once on separate
connections, so the server interleaves them as it would for two browser tabs. Whatever order they
land in, every answer is a success, 404 or 409, the answers agree with each other, and afterwards
no row belongs to a session, run or report that is gone. (Which interleavings a run hits varies
with the machine; fifty tries hit both orders of each race here.)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from conftest import QUESTION, LiveServer, live_server, read_events
from sleuth.audio.files import audio_dir
from sleuth.core.ids import new_id
from sleuth.store.database import Database
from sleuth.store.recovery import this_host
from sleuth.store.store import Store
from sleuth.stream.results import ResearchResult
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import Call, Reply, ScriptedLLM, tool_names
from sleuth_testkit.scenarios import ResearchModel
from support.invariants import check_stored
from support.reports import store_report

RACES = 50
TIMEOUT = 60

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="scripts/test installs espeak-ng")

# Rows whose owner is gone: (what, query counting them).
ORPHANS = {
    "runs": "SELECT COUNT(*) AS n FROM runs WHERE session_id NOT IN (SELECT id FROM sessions)",
    "messages": "SELECT COUNT(*) AS n FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)",
    "packets": "SELECT COUNT(*) AS n FROM packets WHERE run_id NOT IN (SELECT id FROM runs)",
    "reports": "SELECT COUNT(*) AS n FROM reports WHERE session_id NOT IN (SELECT id FROM sessions)",
    "audio": "SELECT COUNT(*) AS n FROM audio WHERE report_id NOT IN (SELECT id FROM reports)",
}


def orphans(database: Database) -> dict[str, int]:
    counts = {what: (database.fetch_one(sql) or {"n": 0})["n"] for what, sql in ORPHANS.items()}
    return {what: n for what, n in counts.items() if n}


@dataclass
class QuickModel(ResearchModel):
    """Runs that end at once with clarification questions; audio scripts that fail at once (no
    speech made), so fifty races do not queue fifty runs or speech processes behind each other."""

    clarify_questions: str | None = "Which version of Python?"

    def audio_script(self, body: dict[str, Any]) -> Reply:
        return Reply(tool_calls=[Call(next(iter(tool_names(body))), {"lines": []})])


@pytest.fixture
def quick_server() -> Iterator[LiveServer]:
    with ScriptedLLM(QuickModel()) as llm, live_server(scripted_settings(llm)) as live:
        yield live


@pytest.fixture
def review_server() -> Iterator[LiveServer]:
    """Runs wait for plan review; cancels answer once the run has ended."""
    with (
        ScriptedLLM(ResearchModel()) as llm,
        live_server(scripted_settings(llm, cancel_wait_s=TIMEOUT)) as live,
    ):
        yield live


@dataclass
class Outcomes:
    seen: Counter[tuple[int, ...]] = field(default_factory=Counter)

    def add(self, *responses: httpx.Response) -> tuple[int, ...]:
        codes = tuple(response.status_code for response in responses)
        self.seen[codes] += 1
        for response in responses:
            assert response.status_code != 500, response.text
            if response.status_code >= 400:  # a refusal says why, as JSON
                assert response.json()["detail"], response.text
        return codes


def stored_report(store: Store) -> tuple[str, str]:
    """A session with one completed run and its report: (session, report)."""
    report_id = new_id("rep")
    result = ResearchResult(
        status="completed",
        stop_reason="completed",
        report_id=report_id,
        question=QUESTION,
        title="Descriptors",
        summary="Data descriptors win.",
        markdown="Data descriptors take precedence over the instance dictionary.",
    )
    return store_report(store, result), report_id


async def test_messages_and_renames_racing_a_session_delete(quick_server: LiveServer) -> None:
    outcomes = Outcomes()
    started: list[str] = []
    async with httpx.AsyncClient(base_url=quick_server.base_url, timeout=TIMEOUT) as client:
        for _ in range(RACES):
            session_id = (await client.post("/api/sessions", json={})).json()["id"]
            message, renamed, deleted = await asyncio.gather(
                client.post(f"/api/sessions/{session_id}/messages", json={"content": QUESTION, "clarify": True}),
                client.patch(f"/api/sessions/{session_id}", json={"title": "renamed"}),
                client.delete(f"/api/sessions/{session_id}"),
            )
            codes = outcomes.add(message, renamed, deleted)
            assert codes[0] in (202, 404) and codes[1] in (200, 404) and codes[2] in (204, 409), codes
            # Refused as busy only when the message did start a run; a message answered 404 found
            # its session deleted.
            assert (codes[2] == 409) <= (codes[0] == 202) and (codes[0] == 404) <= (codes[2] == 204), codes
            if codes[0] == 202:
                started.append(message.json()["run_id"])
        for run_id in started:  # every run that started ends, whether or not its session is still there
            run = await client.get(f"/api/runs/{run_id}")
            if run.status_code == 200:
                check_stored([event.data for event in await read_events(client, run_id)])
    assert orphans(quick_server.database) == {}, outcomes.seen


async def test_follow_ups_and_audio_racing_a_session_delete(quick_server: LiveServer) -> None:
    outcomes = Outcomes()
    store: Store = quick_server.app_state.store
    audio_ids: list[str] = []
    async with httpx.AsyncClient(base_url=quick_server.base_url, timeout=TIMEOUT) as client:
        for _ in range(RACES):
            session_id, report_id = await asyncio.to_thread(stored_report, store)
            followup, audio, deleted = await asyncio.gather(
                client.post(f"/api/sessions/{session_id}/messages", json={"content": "Which wins?", "followup": True}),
                client.post(f"/api/reports/{report_id}/audio", json={"style": "overview"}),
                client.delete(f"/api/sessions/{session_id}"),
            )
            codes = outcomes.add(followup, audio, deleted)
            # A follow-up that finds the report gone is told there is none to ask about (409); audio may
            # find the server at its limit of jobs at once while earlier rounds' jobs end (429).
            assert codes[0] in (202, 404, 409) and codes[1] in (202, 404, 429) and codes[2] in (204, 409), codes
            assert (codes[2] == 409) <= (codes[0] == 202), codes
            if codes[0] == 202 and codes[2] == 409:  # deleted (204): the follow-up had already ended, and went with it
                await read_events(client, followup.json()["run_id"])
            if codes[1] == 202:
                audio_ids.append(audio.json()["audio_id"])
    jobs = quick_server.app_state.audio
    while any(jobs.progress(audio_id) is not None for audio_id in audio_ids):
        await asyncio.sleep(0.05)  # the jobs run on the server's own loop: nothing here to await
    rows = {row["id"] for row in quick_server.database.fetch_all("SELECT id FROM audio")}
    files = {path.stem for path in audio_dir(store).glob("*")} if audio_dir(store).exists() else set()
    assert orphans(quick_server.database) == {}, outcomes.seen
    assert files <= rows  # no file left behind by a job whose session was deleted


async def test_plan_answers_cancels_and_deletes_racing_a_run_in_review(review_server: LiveServer) -> None:
    outcomes = Outcomes()
    async with httpx.AsyncClient(base_url=review_server.base_url, timeout=TIMEOUT) as client:
        for _ in range(RACES):
            created = await client.post(
                "/api/research", json={"question": QUESTION, "clarify": False, "review_plan": True}
            )
            run_id, session_id = created.json()["run_id"], created.json()["session_id"]
            await read_events(client, run_id, until_type="plan_review")
            answered, cancelled, deleted = await asyncio.gather(
                client.post(f"/api/runs/{run_id}/plan", json={"approve": True}),
                client.post(f"/api/runs/{run_id}/cancel"),
                client.delete(f"/api/sessions/{session_id}"),
            )
            codes = outcomes.add(answered, cancelled, deleted)
            assert codes[0] in (200, 404, 409) and codes[1] in (200, 404) and codes[2] in (204, 409), codes
            if codes[2] == 409:  # the delete came while the run was live: after the cancel, it goes
                assert (await client.delete(f"/api/sessions/{session_id}")).status_code == 204
            assert (await client.get(f"/api/runs/{run_id}")).status_code == 404
    assert orphans(review_server.database) == {}, outcomes.seen


@dataclass
class GatedAudioScript(ResearchModel):
    """The audio script is asked for (`asked` released), then answered only once `gate` is set."""

    asked: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    gate: threading.Event = field(default_factory=threading.Event)

    def audio_script(self, body: dict[str, Any]) -> Reply:
        self.asked.release()
        reply = super().audio_script(body)
        reply.gate = self.gate
        return reply


@needs_espeak
async def test_audio_made_for_a_session_deleted_meanwhile_leaves_no_file() -> None:
    model = GatedAudioScript()
    with ScriptedLLM(model) as llm, live_server(scripted_settings(llm)) as server:
        store: Store = server.app_state.store
        async with httpx.AsyncClient(base_url=server.base_url, timeout=TIMEOUT) as client:
            session_id, report_id = await asyncio.to_thread(stored_report, store)
            audio_id = (await client.post(f"/api/reports/{report_id}/audio", json={"style": "overview"})).json()[
                "audio_id"
            ]
            assert await asyncio.to_thread(model.asked.acquire, True, TIMEOUT)  # the job is making it now
            deleted = await client.delete(f"/api/sessions/{session_id}")
            model.gate.set()
            while server.app_state.audio.progress(audio_id) is not None:
                await asyncio.sleep(0.05)  # the job runs on the server's own loop: nothing here to await
            status = await client.get(f"/api/audio/{audio_id}")
        files = list(audio_dir(store).glob("*")) if audio_dir(store).exists() else []
    assert deleted.status_code == 204 and status.status_code == 404
    assert files == []  # the job found its row gone and removed what it made


def stored_audio(store: Store) -> tuple[str, str]:
    """A session whose report has a finished audio file: (session, audio id)."""
    session_id, report_id = stored_report(store)
    audio_id = new_id("a")
    store.create_audio(audio_id, report_id, session_id, "overview", owner_host=this_host(), owner_pid=os.getpid())
    audio_dir(store).mkdir(parents=True, exist_ok=True)
    (audio_dir(store) / f"{audio_id}.wav").write_bytes(b"RIFF" + bytes(64 * 1024))
    store.finish_audio(audio_id, error=None, media_type="audio/wav", duration_s=1.0)
    return session_id, audio_id


async def test_audio_downloads_racing_a_session_delete(quick_server: LiveServer) -> None:
    outcomes = Outcomes()
    store: Store = quick_server.app_state.store
    async with httpx.AsyncClient(base_url=quick_server.base_url, timeout=TIMEOUT) as client:
        for _ in range(RACES):
            session_id, audio_id = await asyncio.to_thread(stored_audio, store)
            downloaded, deleted = await asyncio.gather(
                client.get(f"/api/audio/{audio_id}/file"), client.delete(f"/api/sessions/{session_id}")
            )
            codes = outcomes.add(downloaded, deleted)
            assert codes[0] in (200, 404) and codes[1] == 204, codes
            if codes[0] == 200:
                assert len(downloaded.content) == 4 + 64 * 1024  # the whole file, though it is gone now
        _, audio_id = await asyncio.to_thread(stored_audio, store)
        part = await client.get(f"/api/audio/{audio_id}/file", headers={"Range": "bytes=0-3"})
    assert (part.status_code, part.content) == (206, b"RIFF")  # players seek with ranges: still served
    assert [path.stem for path in audio_dir(store).glob("*")] == [audio_id], outcomes.seen
