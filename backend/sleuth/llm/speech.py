"""Text to speech through litellm (`SLEUTH_TTS_MODEL`, e.g. `openai/tts-1`): the only place speech calls a provider."""

from __future__ import annotations

from sleuth.config import Settings
from sleuth.core import heavy
from sleuth.llm.runtime import litellm_ready

VOICES = ("alloy", "onyx")  # two distinct voices for a dialogue's two speakers


class SpeechError(Exception):
    """The speech provider failed; the message is safe to show (no keys)."""


async def synthesize(settings: Settings, text: str, speaker: int) -> bytes:
    """One line of speech as audio bytes (mp3 unless the provider decides otherwise)."""
    assert settings.tts_model
    await litellm_ready()
    try:
        response = await heavy.litellm.aspeech(
            model=settings.tts_model,
            input=text,
            voice=VOICES[speaker % len(VOICES)],
            api_base=settings.api_base,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            response_format="mp3",
            timeout=settings.llm_timeout_s,
        )
    except Exception as exc:  # provider errors become one clear message
        raise SpeechError(f"speech model {settings.tts_model} failed: {type(exc).__name__}") from None
    return bytes(response.content)
