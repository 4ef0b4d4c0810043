"""Script lines to one audio file: litellm's speech model when `SLEUTH_TTS_MODEL` is set, else eSpeak NG offline."""

from __future__ import annotations

import asyncio
import io
import shutil
import wave
from collections.abc import Callable
from dataclasses import dataclass

from sleuth.audio.script import Line
from sleuth.config import Settings
from sleuth.llm.speech import SpeechError, synthesize

ESPEAK_VOICES = ("en-us+m3", "en-gb+f3")  # two clearly different voices for a dialogue
ESPEAK_WORDS_PER_MINUTE = "165"
PAUSE_S = 0.35
LINE_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Audio:
    data: bytes
    media_type: str
    extension: str
    duration_s: float | None


async def _espeak_line(text: str, voice: str) -> bytes:
    """One line as WAV; the text goes in on stdin, so nothing in it is read as an option."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        raise SpeechError("offline speech needs espeak-ng (Debian: apt-get install espeak-ng), or set SLEUTH_TTS_MODEL")
    process = await asyncio.create_subprocess_exec(
        binary, "-v", voice, "-s", ESPEAK_WORDS_PER_MINUTE, "--stdout",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(text.encode("utf-8")), LINE_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise SpeechError("espeak-ng took too long") from None
    except asyncio.CancelledError:
        process.kill()  # a job cancelled at shutdown leaves no espeak-ng behind
        raise
    if process.returncode != 0 or not out:
        raise SpeechError(f"espeak-ng failed: {err.decode('utf-8', 'replace').strip()[:200]}")
    return out


def join_wavs(parts: list[bytes], pause_s: float = PAUSE_S) -> tuple[bytes, float]:
    """One WAV from several with the same format, a short pause between them; (bytes, seconds)."""
    frames: list[bytes] = []
    params = None
    for part in parts:
        with wave.open(io.BytesIO(part)) as reader:
            if params is None:
                params = reader.getparams()
            frames.append(reader.readframes(reader.getnframes()))
    if params is None:
        raise SpeechError("nothing to speak")
    silence = b"\0" * int(params.framerate * pause_s) * params.sampwidth * params.nchannels
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(params.nchannels)
        writer.setsampwidth(params.sampwidth)
        writer.setframerate(params.framerate)
        writer.writeframes(silence.join(frames))
    total = sum(len(f) for f in frames) + len(silence) * (len(frames) - 1)
    return out.getvalue(), total / (params.framerate * params.sampwidth * params.nchannels)


SpokenLines = Callable[[int, int], None]  # (lines spoken so far, lines in all)


async def speak(settings: Settings, lines: list[Line], on_line: SpokenLines | None = None) -> Audio:
    """All lines, one after another; `on_line` hears after each, so a listener can show progress."""
    if not lines:
        raise SpeechError("nothing to speak")
    parts: list[bytes] = []
    for line in lines:
        if settings.tts_model:
            parts.append(await synthesize(settings, line.text, line.speaker))
        else:
            parts.append(await _espeak_line(line.text, ESPEAK_VOICES[line.speaker % 2]))
        if on_line is not None:
            on_line(len(parts), len(lines))
    if settings.tts_model:
        # MP3 frames concatenate into a playable stream; the provider decides the sound.
        return Audio(b"".join(parts), "audio/mpeg", "mp3", None)
    data, seconds = join_wavs(parts)
    return Audio(data, "audio/wav", "wav", round(seconds, 2))
