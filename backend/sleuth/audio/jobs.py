"""Making a report's audio in the background: script, speech, file; its row says pending, done or failed."""

from __future__ import annotations

import asyncio
import logging

from sleuth.audio.files import audio_dir
from sleuth.audio.script import ScriptError, Style, script_for
from sleuth.audio.speech import speak
from sleuth.config import Settings
from sleuth.llm.speech import SpeechError
from sleuth.research.types import ResearchResult
from sleuth.store import Store
from sleuth.store.ids import new_id

log = logging.getLogger(__name__)


async def make_audio(settings: Settings, report: ResearchResult, style: Style) -> tuple[bytes, str, str, float | None]:
    """(data, media type, extension, duration) of the report spoken in `style`."""
    lines = await script_for(settings, report, style)
    audio = await speak(settings, lines)
    return audio.data, audio.media_type, audio.extension, audio.duration_s


class AudioJobs:
    """Owned by the server; jobs run on its event loop (speech itself runs in subprocesses or a provider)."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self._settings = settings
        self._store = store
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, report: ResearchResult, session_id: str, style: Style) -> str:
        audio_id = new_id("a")
        await asyncio.to_thread(self._store.create_audio, audio_id, str(report.report_id), session_id, style)
        task = asyncio.create_task(self._run(audio_id, report, style))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return audio_id

    async def _run(self, audio_id: str, report: ResearchResult, style: Style) -> None:
        try:
            data, media_type, extension, duration = await make_audio(self._settings, report, style)
            folder = audio_dir(self._store)
            await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
            await asyncio.to_thread((folder / f"{audio_id}.{extension}").write_bytes, data)
        except (ScriptError, SpeechError) as exc:
            await asyncio.to_thread(self._store.finish_audio, audio_id, error=str(exc))
            return
        except Exception as exc:  # a bug still ends the job with a status, never a pending row forever
            log.exception("audio %s failed", audio_id)
            await asyncio.to_thread(self._store.finish_audio, audio_id, error=f"internal error: {type(exc).__name__}")
            return
        await asyncio.to_thread(
            self._store.finish_audio, audio_id, error=None, media_type=media_type, duration_s=duration
        )

    async def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
