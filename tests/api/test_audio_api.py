"""Audio: each style becomes a playable file of plausible length (offline espeak-ng); the litellm speech path."""

from __future__ import annotations

import asyncio
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response

from conftest import LiveServer, live_server, read_events, start_research
from sleuth.audio.encoding import MP3_KBPS, WavEncoding
from sleuth.audio.jobs import make_audio
from sleuth.audio.script import Line
from sleuth.audio.speech import Spoken, output_of, speak
from sleuth.config import Settings
from sleuth.stream.results import ResearchResult
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM, tool_names
from sleuth_testkit.scenarios import ResearchModel
from support.mp3 import mp3_seconds

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="scripts/test installs espeak-ng")


async def _finished_report(client: httpx.AsyncClient) -> dict:  # type: ignore[type-arg]
    run_id = await start_research(client, clarify=False)
    await read_events(client, run_id)
    run = (await client.get(f"/api/runs/{run_id}")).json()
    return (await client.get(f"/api/reports/{run['report_id']}")).json()  # type: ignore[no-any-return]


async def _wait_done(client: httpx.AsyncClient, audio_id: str) -> dict:  # type: ignore[type-arg]
    for _ in range(1200):
        status = (await client.get(f"/api/audio/{audio_id}")).json()
        if status["status"] != "pending":
            return status  # type: ignore[no-any-return]
        await asyncio.sleep(0.1)
    raise AssertionError("audio still pending after two minutes")


@needs_espeak
async def test_each_style_makes_an_mp3_of_plausible_length(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        report = await _finished_report(client)
        made = {}
        for style in ("narration", "overview", "dialogue"):
            started = await client.post(f"/api/reports/{report['report_id']}/audio", json={"style": style})
            assert started.status_code == 202 and started.json()["status"] == "pending"
            status = await _wait_done(client, started.json()["audio_id"])
            assert status["status"] == "done", status
            file = await client.get(status["url"])
            made[style] = (status, file)
    for style, (status, file) in made.items():
        assert file.status_code == 200 and file.headers["content-type"] == "audio/mpeg"
        assert status["media_type"] == "audio/mpeg" and file.headers["content-disposition"].endswith('.mp3"')
        seconds = mp3_seconds(file.content)  # a whole MP3 stream, every frame intact
        assert abs(seconds - status["duration_s"]) < 0.2
        assert seconds > 3, style
        assert len(file.content) <= seconds * MP3_KBPS * 1000 / 8 * 1.05  # compressed: 32 kbit/s, not 353 (WAV)
    # At about 165 words a minute, each file lasts between a third and three times the speaking
    # time of its words: narration reads the report (title, summary, body), the others the scripts.
    narrated = " ".join([report["title"], report["summary"], report["markdown"].split("## How this report")[0]])
    scripted = 6 * len("Line 0: descriptors take precedence over getattr.".split())

    def plausible(seconds: float, words: int) -> bool:
        return words / 165 * 60 / 3 < seconds < words / 165 * 60 * 3

    assert plausible(made["narration"][0]["duration_s"], len(narrated.split()))
    assert plausible(made["overview"][0]["duration_s"], scripted)
    assert plausible(made["dialogue"][0]["duration_s"], scripted)


@needs_espeak
async def test_asking_again_for_a_report_and_style_gives_the_same_audio(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        report = await _finished_report(client)
        url = f"/api/reports/{report['report_id']}/audio"
        burst = await asyncio.gather(*(client.post(url, json={"style": "narration"}) for _ in range(8)))
        ids = {answer.json()["audio_id"] for answer in burst}
        done = await _wait_done(client, ids.pop())
        again = await client.post(url, json={"style": "narration"})
        other_style = await client.post(url, json={"style": "overview"})
    assert sorted(answer.status_code for answer in burst) == [200] * 7 + [202] and not ids
    assert done["status"] == "done"
    assert again.status_code == 200 and again.json() == done  # done: its status and file, no new job
    assert other_style.status_code == 202 and other_style.json()["audio_id"] != done["audio_id"]


@dataclass
class OverviewFailsDialogueHangs(ResearchModel):
    """The overview script is never written (its job fails); the dialogue script request hangs (its job
    stays pending, holding a slot). `asked` is released on each dialogue request."""

    asked: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))

    def audio_script(self, body: dict[str, Any]) -> Reply:
        if "record_dialogue" in tool_names(body):
            self.asked.release()
            return Reply(hang=True)
        return Reply(text="No script today.")


async def test_audio_past_the_server_limit_is_429_and_a_failed_one_is_made_again() -> None:
    model = OverviewFailsDialogueHangs()
    with ScriptedLLM(model) as llm, live_server(scripted_settings(llm, audio_max_jobs=1)) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=60) as client:
            report = await _finished_report(client)
            url = f"/api/reports/{report['report_id']}/audio"
            first = await client.post(url, json={"style": "overview"})
            failed = await _wait_done(client, first.json()["audio_id"])
            retried = await client.post(url, json={"style": "overview"})
            await _wait_done(client, retried.json()["audio_id"])
            holding = await client.post(url, json={"style": "dialogue"})
            assert await asyncio.to_thread(model.asked.acquire, True, 60), "the dialogue job never asked for its script"
            refused = await client.post(url, json={"style": "narration"})
            same = await client.post(url, json={"style": "dialogue"})
    assert first.status_code == 202 and failed["status"] == "failed" and failed["error"]
    assert retried.status_code == 202 and retried.json()["audio_id"] != first.json()["audio_id"]
    assert holding.status_code == 202
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert refused.json() == {"detail": "this server is making its maximum of 1 audio files at once; retry later"}
    assert same.status_code == 200 and same.json()["audio_id"] == holding.json()["audio_id"]
    assert same.json()["status"] == "pending"


async def test_audio_errors_are_clear(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as client:
        missing = await client.post("/api/reports/rep_missing/audio", json={"style": "narration"})
        report = await _finished_report(client)
        bad_style = await client.post(f"/api/reports/{report['report_id']}/audio", json={"style": "opera"})
        unknown = await client.get("/api/audio/a_missing")
    assert missing.status_code == 404 and bad_style.status_code == 422 and unknown.status_code == 404


@contextmanager
def speech_endpoint(wav: bytes) -> Iterator[tuple[str, list[dict]]]:  # type: ignore[type-arg]
    """An OpenAI-compatible /v1/audio/speech on 127.0.0.1 that records requests and answers with `wav`."""
    app = FastAPI()
    seen: list[dict] = []  # type: ignore[type-arg]

    @app.post("/v1/audio/speech")
    async def speech(request: Request) -> Response:
        seen.append(await request.json())
        return Response(wav, media_type="audio/mpeg")

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", seen
    finally:
        server.should_exit = True
        thread.join(10)


async def test_a_litellm_speech_model_reads_the_report_and_gives_two_speakers_two_voices(tmp_path: Path) -> None:
    report = ResearchResult(
        status="completed",
        stop_reason="completed",
        report_id="rep_x",
        question="q?",
        title="Descriptors",
        summary="Data descriptors win [1].",
        markdown="Body text [1].\n\n## Part\n\n- a point [2]\n\n## How this report was made\n\n- counts",
    )
    chunk = b"ID3-fake-mp3-frame;"
    with speech_endpoint(chunk) as (base, seen):
        settings = Settings(tts_model="openai/tts-1", api_base=base, api_key="sk-speech-secret")
        assert output_of(settings, WavEncoding()) == ("audio/mpeg", "mp3")  # a provider's MP3, whatever the encoder
        narrated = await make_audio(settings, report, "narration", tmp_path / "narration.mp3", WavEncoding())
        spoken = len(seen)
        heard: list[tuple[int, int]] = []
        lines = [Line(0, "Host line."), Line(1, "Researcher line.")]
        dialogue = await speak(
            settings, lines, tmp_path / "dialogue.mp3", WavEncoding(), lambda done, total: heard.append((done, total))
        )
    assert narrated == Spoken("audio/mpeg", None, len(chunk) * spoken)
    assert (tmp_path / "narration.mp3").read_bytes() == chunk * spoken
    assert [body["input"] for body in seen[:spoken]] == [
        "Descriptors",
        "Data descriptors win.",
        "Body text.",
        "Part",
        "a point",
    ]
    assert {body["model"] for body in seen} == {"tts-1"}
    assert [body["voice"] for body in seen[spoken:]] == ["alloy", "onyx"] and dialogue.size == len(chunk) * 2
    assert (tmp_path / "dialogue.mp3").read_bytes() == chunk * 2
    assert heard == [(1, 2), (2, 2)]  # progress after each spoken line
