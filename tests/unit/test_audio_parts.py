"""Audio without a server: the cap on what is spoken, the encoder choice, and files written as they are spoken."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import threading
import wave
from pathlib import Path
from types import ModuleType

import pytest

from sleuth.audio.encoding import Mp3Encoding, Pcm, Sink, WavEncoding, available_encoding
from sleuth.audio.jobs import FILE_GONE_MESSAGE, AudioJobs, make_audio
from sleuth.audio.script import CUT_NOTE, Line, capped, script_for
from sleuth.audio.speech import CHUNK_BYTES, _Recording
from sleuth.config import Settings
from sleuth.store.store import Store
from sleuth.stream.results import ResearchResult
from support.mp3 import mp3_seconds
from support.reports import store_report

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="scripts/test installs espeak-ng")

SENTENCE = "Data descriptors take precedence over the instance dictionary. "


def _report(paragraphs: int) -> ResearchResult:
    body = "\n\n".join(f"## Part {n}\n\n{SENTENCE * 4}" for n in range(paragraphs))
    return ResearchResult(
        status="completed",
        stop_reason="completed",
        report_id="rep_long",
        question="How does attribute lookup work?",
        title="Attribute lookup",
        summary="Descriptors first.",
        markdown=body,
    )


async def test_a_script_longer_than_the_cap_is_cut_at_a_sentence_and_says_so() -> None:
    settings = Settings(audio_max_script_chars=1000)
    whole = await script_for(Settings(), _report(20), "narration")
    cut = await script_for(settings, _report(20), "narration")
    short = await script_for(settings, _report(1), "narration")
    spoken = [line.text for line in cut[:-1]]
    assert sum(len(line.text) for line in whole) > 5000
    assert cut[-1] == Line(0, CUT_NOTE)
    assert 900 < sum(map(len, spoken)) <= 1000  # filled up to the cap, not beyond
    assert spoken[-1].endswith("dictionary.") and whole[: len(spoken) - 1] == cut[: len(spoken) - 1]
    assert CUT_NOTE not in (line.text for line in short) and short == await script_for(
        Settings(), _report(1), "narration"
    )


def test_a_line_with_no_sentence_end_in_reach_is_cut_at_a_word_and_a_single_word_is_dropped() -> None:
    assert capped([Line(1, "one two three four")], 10) == [Line(1, "one two"), Line(0, CUT_NOTE)]
    assert capped([Line(0, "ok"), Line(1, "unbreakable")], 5) == [Line(0, "ok"), Line(0, CUT_NOTE)]
    assert capped([Line(0, "fits exactly")], 12) == [Line(0, "fits exactly")]


def test_mp3_when_the_encoder_loads_and_wav_when_it_does_not() -> None:
    def missing() -> ModuleType:
        raise ImportError("No module named 'lameenc'")

    assert isinstance(available_encoding(), Mp3Encoding)
    fallback = available_encoding(missing)
    assert isinstance(fallback, WavEncoding) and fallback.media_type == "audio/wav"


# Traced in a process of its own: tracemalloc counts every thread's allocations, and a pytest worker
# may have a background import under way (resolving `sleuth research` starts litellm's preload).
_TRACE_SPEECH = """
import asyncio, json, sys, tracemalloc
from pathlib import Path
from sleuth.audio.encoding import WavEncoding, available_encoding
from sleuth.audio.script import Line
from sleuth.audio.speech import speak
from sleuth.config import Settings

async def main(out: Path, sentence: str) -> None:
    lines = [Line(n % 2, sentence * 8) for n in range(4)]  # about two minutes of speech
    mp3_encoding = available_encoding()
    tracemalloc.start()
    wav = await speak(Settings(), lines, out / "a.wav", WavEncoding())
    _, wav_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    mp3 = await speak(Settings(), lines, out / "a.mp3", mp3_encoding)
    _, mp3_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"wav": [wav.media_type, wav.size, wav.duration_s], "mp3": [mp3.media_type, mp3.size,
        mp3.duration_s], "peak": max(wav_peak, mp3_peak)}))

asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
"""


@needs_espeak
def test_speech_streams_to_disk_without_holding_the_audio_in_memory(tmp_path: Path) -> None:
    traced = subprocess.run(
        [sys.executable, "-c", _TRACE_SPEECH, str(tmp_path), SENTENCE], capture_output=True, text=True, timeout=300
    )
    assert traced.returncode == 0, traced.stderr
    spoken = json.loads(traced.stdout)
    (wav_type, wav_size, wav_duration), (mp3_type, mp3_size, mp3_duration) = spoken["wav"], spoken["mp3"]
    with wave.open(str(tmp_path / "a.wav")) as reader:
        wav_seconds = reader.getnframes() / reader.getframerate()
    assert wav_type == "audio/wav" and wav_size == (tmp_path / "a.wav").stat().st_size > 4_000_000
    assert wav_duration is not None and abs(wav_seconds - wav_duration) < 0.01
    assert mp3_type == "audio/mpeg" and mp3_duration == wav_duration
    assert abs(mp3_seconds((tmp_path / "a.mp3").read_bytes()) - wav_duration) < 0.2
    assert mp3_size < wav_size / 8
    # A few pipe reads and encoder chunks at a time (under a megabyte), never the file (over four).
    assert spoken["peak"] < 2_000_000


class _DiskFillsUp(WavEncoding):
    """WAV whose second chunk cannot be written, as on a full disk."""

    def open(self, path: Path, pcm: Pcm) -> Sink:
        inner = super().open(path, pcm)
        written: list[int] = []

        class Filling:
            def write(self, data: bytes) -> None:
                if written:
                    raise OSError(28, "No space left on device")
                written.append(len(data))
                inner.write(data)

            def close(self) -> None:
                inner.close()

        return Filling()


@needs_espeak
async def test_a_job_that_fails_midway_leaves_no_partial_file(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="No space left"):
        await make_audio(Settings(), _report(3), "narration", tmp_path / "x.wav", _DiskFillsUp())
    assert list(tmp_path.iterdir()) == []


@needs_espeak  # without a speaker each job fails at once, and a failed audio is made again
async def test_a_burst_of_requests_for_one_audio_starts_one_job_and_gives_it_to_all(tmp_path: Path) -> None:
    store = Store(tmp_path)
    jobs = AudioJobs(Settings(audio_max_jobs=2), store, encoding=WavEncoding())
    session_id = store_report(store, _report(2))
    try:
        burst = await asyncio.gather(*(jobs.start(_report(2), session_id, "narration") for _ in range(8)))
    finally:
        await jobs.shutdown()
        store.close()
    assert len({started.audio_id for started in burst}) == 1  # no request refused for want of a slot
    assert sorted(started.new for started in burst) == [False] * 7 + [True]


async def test_a_done_audio_whose_file_is_gone_is_made_again(tmp_path: Path) -> None:
    store = Store(tmp_path)
    jobs = AudioJobs(Settings(), store, encoding=WavEncoding())
    session_id = store_report(store, _report(1))
    try:
        store.create_audio("a_gone", "rep_long", session_id, "narration", owner_host="h", owner_pid=1)
        store.finish_audio("a_gone", error=None, media_type="audio/wav", duration_s=1.0)  # and no file
        started = await jobs.start(_report(1), session_id, "narration")
        gone = store.get_audio("a_gone")
    finally:
        await jobs.shutdown()
        store.close()
    assert started.new and started.audio_id != "a_gone"
    assert gone is not None and gone["status"] == "failed" and gone["error"] == FILE_GONE_MESSAGE


class _SlowSink:
    """A sink whose `write` holds its chunk until `gate` opens; `close` notes whether a write was still
    encoding (LAME aborts the process when flushed mid-encode)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.writing = threading.Event()
        self.calls: list[str] = []

    def write(self, pcm: bytes) -> None:
        self.writing.set()
        self.gate.wait(WAIT_S)
        self.calls.append("write")
        self.writing.clear()

    def close(self) -> None:
        self.calls.append("close while encoding" if self.writing.is_set() else "close")


class _Attempts:
    """A lock that says when someone first waits for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.waited = threading.Event()

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            self.waited.set()
            self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


WAIT_S = 30  # bounds a hang only


async def test_a_job_cancelled_mid_encode_closes_its_file_only_after_the_chunk_is_encoded(tmp_path: Path) -> None:
    sink = _SlowSink()

    class Slow:
        media_type, extension = "audio/x-test", "x"

        def open(self, path: Path, pcm: Pcm) -> Sink:
            return sink

    recording = _Recording(tmp_path / "a.x", Slow())
    lock = _Attempts()
    recording._using = lock  # type: ignore[assignment]  # to see abandon wait for the chunk
    await recording.begin_line(Pcm(rate=22050, channels=1, width=2))
    writing = asyncio.create_task(recording.write(b"\0" * CHUNK_BYTES))
    assert await asyncio.to_thread(sink.writing.wait, WAIT_S)
    writing.cancel()  # as a session deleted mid-speech cancels its job; the encoding thread goes on
    with pytest.raises(asyncio.CancelledError):
        await writing
    abandoning = asyncio.create_task(asyncio.to_thread(recording.abandon))
    assert await asyncio.to_thread(lock.waited.wait, WAIT_S), "abandon did not wait for the chunk"
    sink.gate.set()
    await abandoning
    assert sink.calls == ["write", "close"]
