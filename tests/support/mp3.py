"""How long an MP3 file plays, read from its frame headers (no decoder needed), for tests of audio files."""

from __future__ import annotations

# Layer III bit rates (kbit/s) by bit-rate index: MPEG-1, then MPEG-2 and 2.5.
_KBPS_V1 = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_KBPS_V2 = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}  # by version bits


def mp3_seconds(data: bytes) -> float:
    """Seconds of audio in an MPEG Layer III stream: every byte must belong to a frame (after any ID3v2 tag),
    so anything that is not a whole MP3 stream (a WAV, a torn file) raises ValueError."""
    at = 0
    if data[:3] == b"ID3":
        at = 10 + int.from_bytes(bytes(b & 0x7F for b in data[6:10]), "big")
    samples, rate = 0, 0
    while at < len(data):
        header = int.from_bytes(data[at : at + 4], "big")
        version, layer = (header >> 19) & 3, (header >> 17) & 3
        bitrate_index, rate_index = (header >> 12) & 15, (header >> 10) & 3
        if header >> 21 != 0x7FF or version == 1 or layer != 1 or bitrate_index in (0, 15) or rate_index == 3:
            raise ValueError(f"no MP3 frame at byte {at}")
        rate = _RATES[version][rate_index]
        kbps = (_KBPS_V1 if version == 3 else _KBPS_V2)[bitrate_index]
        per_frame = 1152 if version == 3 else 576
        at += per_frame // 8 * kbps * 1000 // rate + ((header >> 9) & 1)
        samples += per_frame
    if not rate:
        raise ValueError("no MP3 frames")
    return samples / rate
