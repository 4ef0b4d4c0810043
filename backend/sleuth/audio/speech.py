"""Script lines to one audio file: litellm's speech model when `SLEUTH_TTS_MODEL` is set, else eSpeak NG offline.

The file is written as the lines are spoken: eSpeak NG's output streams from its stdout through the
encoder to disk, and a provider's answer is appended line by line, so a long narration never sits
whole in the server's memory. A job that fails or is cancelled leaves no partial file behind.
"""

from __future__ import annotations

import asyncio
import shutil
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sleuth.audio.encoding import Encoding, Pcm, Sink
from sleuth.audio.script import Line
from sleuth.config import Settings
from sleuth.llm.speech import SpeechError, synthesize

ESPEAK_VOICES = ("en-us+m3", "en-gb+f3")  # two clearly different voices for a dialogue
ESPEAK_WORDS_PER_MINUTE = "165"
PAUSE_S = 0.35
LINE_TIMEOUT_S = 120.0
CHUNK_BYTES = 64 * 1024  # what the encoder gets at a time: few hops to a thread, small enough to stream
MAX_HEADER_CHUNK = 4096  # a WAV header's chunks before `data` are a few bytes; anything larger is not espeak-ng's

SpokenLines = Callable[[int, int], None]  # (lines spoken so far, lines in all)


@dataclass(frozen=True)
class Spoken:
    """What `speak` wrote: its media type, its length (unknown for a provider's MP3) and its size."""

    media_type: str
    duration_s: float | None
    size: int


def output_of(settings: Settings, encoding: Encoding) -> tuple[str, str]:
    """(media type, file extension) of what `speak` writes with these settings."""
    if settings.tts_model:
        return "audio/mpeg", "mp3"  # providers are asked for MP3
    return encoding.media_type, encoding.extension


async def speak(
    settings: Settings, lines: list[Line], path: Path, encoding: Encoding, on_line: SpokenLines | None = None
) -> Spoken:
    """All lines, one after another, into `path`; `on_line` hears after each, so a listener can show progress."""
    if not lines:
        raise SpeechError("nothing to speak")
    media_type, _ = output_of(settings, encoding)
    duration: float | None = None
    try:
        if settings.tts_model:
            await _provider_speech(settings, lines, path, on_line)
        else:
            duration = await _espeak_speech(lines, path, encoding, on_line)
        size = (await asyncio.to_thread(path.stat)).st_size
    except BaseException:
        await asyncio.to_thread(path.unlink, missing_ok=True)
        raise
    return Spoken(media_type, duration, size)


async def _provider_speech(settings: Settings, lines: list[Line], path: Path, on_line: SpokenLines | None) -> None:
    # MP3 frames concatenate into a playable stream; the provider decides the sound.
    file = await asyncio.to_thread(path.open, "wb")
    try:
        for done, line in enumerate(lines, 1):
            await asyncio.to_thread(file.write, await synthesize(settings, line.text, line.speaker))
            if on_line is not None:
                on_line(done, len(lines))
    finally:
        await asyncio.to_thread(file.close)


class _Recording:
    """The file being made from eSpeak NG's lines: opened at the first line's format, a pause between lines,
    whole frames handed to the encoder (in a thread: encoding is CPU work) a chunk at a time.

    A job cancelled while a chunk is being encoded leaves that thread running: `abandon` waits for it
    under `_using`, because LAME aborts the whole process when its encoder is flushed mid-encode."""

    def __init__(self, path: Path, encoding: Encoding) -> None:
        self._path = path
        self._encoding = encoding
        self._using = threading.Lock()  # one call into the sink at a time, whichever thread makes it
        self._sink: Sink | None = None
        self._pcm: Pcm | None = None
        self._pending = bytearray()
        self.frames_bytes = 0

    async def begin_line(self, pcm: Pcm) -> None:
        if self._pcm is None:
            self._pcm = pcm
            try:
                self._sink = await asyncio.to_thread(self._encoding.open, self._path, pcm)
            except ValueError as exc:
                raise SpeechError(f"espeak-ng's audio cannot be encoded: {exc}") from None
        elif pcm != self._pcm:
            raise SpeechError("espeak-ng changed its audio format between lines")
        else:
            pause = int(pcm.rate * PAUSE_S) * pcm.frame_bytes
            await self.write(b"\0" * pause)

    async def write(self, data: bytes) -> None:
        self._pending += data
        if len(self._pending) >= CHUNK_BYTES:
            await self._flush()

    async def end_line(self) -> None:
        await self._flush()
        self._pending.clear()  # a torn last frame (never seen from espeak-ng) is dropped, not shifted into the next

    async def _flush(self) -> None:
        assert self._sink is not None and self._pcm is not None
        whole = len(self._pending) - len(self._pending) % self._pcm.frame_bytes
        if whole:
            chunk = bytes(self._pending[:whole])
            del self._pending[:whole]
            await asyncio.to_thread(self._locked, self._sink.write, chunk)
            self.frames_bytes += whole

    def _locked(self, call: Callable[..., None], *args: bytes) -> None:
        with self._using:
            call(*args)

    async def close(self) -> float:
        """Finish the file; its length in seconds."""
        if self._sink is None or self._pcm is None:
            raise SpeechError("nothing to speak")
        await asyncio.to_thread(self._locked, self._sink.close)
        return self.frames_bytes / self._pcm.bytes_per_s

    def abandon(self) -> None:
        if self._sink is not None:
            try:
                with self._using:  # at most one chunk's encoding to wait for
                    self._sink.close()
            except Exception:  # noqa: BLE001 - the file is removed next; its close may fail as it likes
                pass


async def _espeak_speech(lines: list[Line], path: Path, encoding: Encoding, on_line: SpokenLines | None) -> float:
    binary = shutil.which("espeak-ng")
    if binary is None:
        raise SpeechError("offline speech needs espeak-ng (Debian: apt-get install espeak-ng), or set SLEUTH_TTS_MODEL")
    recording = _Recording(path, encoding)
    try:
        for done, line in enumerate(lines, 1):
            await _espeak_line(binary, line.text, ESPEAK_VOICES[line.speaker % 2], recording)
            if on_line is not None:
                on_line(done, len(lines))
        seconds = await recording.close()
    except BaseException:
        recording.abandon()
        raise
    return round(seconds, 2)


async def _read_header(stdout: asyncio.StreamReader) -> Pcm:
    """The format in a WAV header, read off a stream (espeak-ng cannot seek back to write real lengths)."""
    riff = await stdout.readexactly(12)
    if riff[:4] != b"RIFF" or riff[8:] != b"WAVE":
        raise SpeechError("espeak-ng did not write WAV")
    pcm: Pcm | None = None
    while True:
        head = await stdout.readexactly(8)
        kind, size = head[:4], int.from_bytes(head[4:], "little")
        if kind == b"data":
            if pcm is None:
                raise SpeechError("espeak-ng wrote no audio format")
            return pcm
        if size > MAX_HEADER_CHUNK:
            raise SpeechError("espeak-ng wrote an unexpected WAV header")
        body = await stdout.readexactly(size + size % 2)
        if kind == b"fmt ":
            tag, channels, rate, _, _, bits = struct.unpack("<HHIIHH", body[:16])
            if tag != 1 or bits % 8:
                raise SpeechError("espeak-ng wrote audio that is not PCM")
            pcm = Pcm(rate=rate, channels=channels, width=bits // 8)


async def _espeak_line(binary: str, text: str, voice: str, recording: _Recording) -> None:
    """One line onto the recording; the text goes in on stdin, so nothing in it is read as an option."""
    process = await asyncio.create_subprocess_exec(
        binary, "-v", voice, "-s", ESPEAK_WORDS_PER_MINUTE, "--stdout",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    stdin, stdout = process.stdin, process.stdout

    async def feed() -> None:
        stdin.write(text.encode("utf-8"))
        try:
            await stdin.drain()
        except ConnectionError:  # espeak-ng died early: its exit code and stderr tell why
            pass
        stdin.close()

    feeding = asyncio.create_task(feed())
    errors = asyncio.create_task(process.stderr.read())
    spoke = False
    try:
        async with asyncio.timeout(LINE_TIMEOUT_S):
            try:
                pcm = await _read_header(stdout)
            except asyncio.IncompleteReadError:
                pass  # no audio at all: reported below with espeak-ng's own message
            else:
                await recording.begin_line(pcm)
                while chunk := await stdout.read(CHUNK_BYTES):
                    await recording.write(chunk)
                await recording.end_line()
                spoke = True
            await feeding
            err = await errors
            code = await process.wait()
    except TimeoutError:
        raise SpeechError("espeak-ng took too long") from None
    finally:
        if process.returncode is None:
            process.kill()  # a job cancelled at shutdown, or a line that failed, leaves no espeak-ng behind
            await process.wait()
        for task in (feeding, errors):
            task.cancel()
    if code != 0 or not spoke:
        raise SpeechError(f"espeak-ng failed: {err.decode('utf-8', 'replace').strip()[:200]}")
