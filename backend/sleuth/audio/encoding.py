"""How spoken PCM becomes a file, written as it is spoken: MP3 through LAME (the `lameenc` wheel), or WAV
when no encoder loads. Either way the audio goes to disk chunk by chunk and is never held whole in memory."""

from __future__ import annotations

import importlib
import logging
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import BinaryIO, Protocol, cast

log = logging.getLogger(__name__)

# Speech at 22 kHz mono: 32 kbit/s keeps it clear at a small fraction of the size of the same WAV.
MP3_KBPS = 32
LAME_QUALITY = 7  # LAME's fastest good setting: speech needs no slower, finer search


@dataclass(frozen=True)
class Pcm:
    """The shape of raw samples: frames a second, channels, bytes a sample."""

    rate: int
    channels: int
    width: int

    @property
    def frame_bytes(self) -> int:
        return self.channels * self.width

    @property
    def bytes_per_s(self) -> int:
        return self.rate * self.frame_bytes


class Sink(Protocol):
    """An audio file being written: whole frames in, then `close` finishes the file."""

    def write(self, pcm: bytes) -> None: ...
    def close(self) -> None: ...


class Encoding(Protocol):
    media_type: str
    extension: str

    def open(self, path: Path, pcm: Pcm) -> Sink: ...


class _WavSink:
    def __init__(self, path: Path, pcm: Pcm) -> None:
        self._writer = wave.open(str(path), "wb")  # noqa: SIM115 - closed by close()
        self._writer.setnchannels(pcm.channels)
        self._writer.setsampwidth(pcm.width)
        self._writer.setframerate(pcm.rate)

    def write(self, pcm: bytes) -> None:
        self._writer.writeframesraw(pcm)

    def close(self) -> None:
        self._writer.close()  # writes the real lengths into the header


class WavEncoding:
    """Uncompressed: the fallback when no encoder is installed (about 2.6 MB a minute of speech)."""

    media_type = "audio/wav"
    extension = "wav"

    def open(self, path: Path, pcm: Pcm) -> Sink:
        return _WavSink(path, pcm)


class _LameEncoder(Protocol):
    """The part of `lameenc.Encoder` used here (the wheel ships no type hints)."""

    def set_bit_rate(self, kbps: int) -> None: ...
    def set_in_sample_rate(self, rate: int) -> None: ...
    def set_channels(self, channels: int) -> None: ...
    def set_quality(self, quality: int) -> None: ...
    def silence(self) -> None: ...
    def encode(self, pcm: bytes) -> bytes: ...
    def flush(self) -> bytes: ...


class _Mp3Sink:
    def __init__(self, encoder: _LameEncoder, path: Path) -> None:
        self._encoder = encoder
        self._file: BinaryIO = path.open("wb")

    def write(self, pcm: bytes) -> None:
        self._file.write(self._encoder.encode(pcm))

    def close(self) -> None:
        try:
            self._file.write(self._encoder.flush())
        finally:
            self._file.close()


class Mp3Encoding:
    """MP3 at `MP3_KBPS`, constant bit rate: every browser's <audio> plays it."""

    media_type = "audio/mpeg"
    extension = "mp3"

    def __init__(self, lame: ModuleType) -> None:
        self._lame = lame

    def open(self, path: Path, pcm: Pcm) -> Sink:
        if pcm.width != 2:
            raise ValueError(f"MP3 encoding takes 16-bit samples, not {8 * pcm.width}-bit")
        encoder = cast(_LameEncoder, self._lame.Encoder())
        encoder.silence()  # LAME would print its banner on the server's stdout
        encoder.set_bit_rate(MP3_KBPS)
        encoder.set_in_sample_rate(pcm.rate)
        encoder.set_channels(pcm.channels)
        encoder.set_quality(LAME_QUALITY)
        return _Mp3Sink(encoder, path)


def _import_lame() -> ModuleType:
    return importlib.import_module("lameenc")


def available_encoding(load_lame: Callable[[], ModuleType] = _import_lame) -> Encoding:
    """MP3 when the LAME encoder loads; WAV otherwise, with a warning (the files are ten times larger)."""
    try:
        return Mp3Encoding(load_lame())
    except ImportError as exc:
        log.warning("audio is written as WAV, about 10x larger than MP3: the lameenc encoder did not load (%s)", exc)
        return WavEncoding()
