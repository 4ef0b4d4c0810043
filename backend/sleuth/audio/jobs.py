"""Making a report's audio in the background: script, speech, file; its row says pending, done or failed."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import Literal, Protocol

from sleuth.audio.files import audio_dir, remove_audio_file
from sleuth.audio.recovery import LOST_MESSAGE, SHUTDOWN_MESSAGE, fail_orphaned_audio
from sleuth.audio.script import ScriptError, Style, script_for
from sleuth.audio.speech import SpokenLines, speak
from sleuth.background import Periodic
from sleuth.config import Settings
from sleuth.llm.speech import SpeechError
from sleuth.research.types import ResearchResult
from sleuth.store import Store
from sleuth.store.ids import new_id
from sleuth.store.recovery import this_host

log = logging.getLogger(__name__)


async def make_audio(
    settings: Settings, report: ResearchResult, style: Style, on_line: SpokenLines | None = None
) -> tuple[bytes, str, str, float | None]:
    """(data, media type, extension, duration) of the report spoken in `style`; `on_line` as in `speak`."""
    lines = await script_for(settings, report, style)
    audio = await speak(settings, lines, on_line)
    return audio.data, audio.media_type, audio.extension, audio.duration_s


@dataclass
class Progress:
    """Where a job of this process is: writing its script, then speaking line `done` of `total`."""

    stage: Literal["script", "speech"] = "script"
    done: int = 0
    total: int = 0

    def spoke(self, done: int, total: int) -> None:
        self.stage, self.done, self.total = "speech", done, total


class JobOwners(Protocol):
    """Scaled out: which server is making which job (`scaleout/audio_owners.py`)."""

    renew_every_s: float

    async def hold(self, audio_id: str) -> None: ...
    async def release(self, audio_id: str) -> None: ...
    async def renew(self, audio_ids: list[str]) -> None: ...
    async def alive(self, audio_ids: list[str]) -> set[str]: ...
    async def close(self) -> None: ...


class AudioJobs:
    """Owned by the server; jobs run on its event loop (speech itself runs in subprocesses or a provider).

    With `owners` (servers sharing one store), each job is held while it is made, and the jobs
    that no live server holds are ended, at start and then periodically."""

    def __init__(self, settings: Settings, store: Store, owners: JobOwners | None = None) -> None:
        self._settings = settings
        self._store = store
        self._owners = owners
        self._tasks: dict[asyncio.Task[None], str] = {}
        self._progress: dict[str, Progress] = {}
        self._watching: Periodic | None = None

    def progress(self, audio_id: str) -> Progress | None:
        """Progress of a job this process is making; None for any other (done, failed, another process's)."""
        return self._progress.get(audio_id)

    async def recover(self) -> list[str]:
        """At start-up: fail the jobs a dead process left pending (their ids). Scaled out: the jobs no
        live server holds, and from then on every third of a lease (holding this server's meanwhile)."""
        if self._owners is None:
            failed = await asyncio.to_thread(fail_orphaned_audio, self._store)
        else:
            failed = await self._fail_unowned(self._owners)
            self._watching = Periodic(self._check_owners, self._owners.renew_every_s, what="checking audio jobs")
            self._watching.start()
        for audio_id in failed:
            log.warning("audio %s was pending when its server stopped; marked failed", audio_id)
        return failed

    async def _fail_unowned(self, owners: JobOwners) -> list[str]:
        pending = [str(row["id"]) for row in await asyncio.to_thread(self._store.pending_audio)]
        held = await owners.alive(pending)
        lost = [audio_id for audio_id in pending if audio_id not in held and audio_id not in self._progress]
        for audio_id in lost:
            await asyncio.to_thread(self._store.finish_audio, audio_id, error=LOST_MESSAGE)
        return lost

    async def _check_owners(self) -> None:
        assert self._owners is not None
        await self._owners.renew(list(self._progress))
        for audio_id in await self._fail_unowned(self._owners):
            log.warning("audio %s was pending when its server stopped; marked failed", audio_id)

    async def start(self, report: ResearchResult, session_id: str, style: Style) -> str:
        audio_id = new_id("a")
        if self._owners is not None:
            await self._owners.hold(audio_id)  # before its row: a pending row always has its holder
        try:
            await asyncio.to_thread(
                self._store.create_audio,
                audio_id,
                str(report.report_id),
                session_id,
                style,
                owner_host=this_host(),
                owner_pid=os.getpid(),
            )
        except BaseException:  # the report was deleted meanwhile (NotFound): no job, nothing held
            if self._owners is not None:
                await self._owners.release(audio_id)
            raise
        task = asyncio.create_task(self._run(audio_id, report, style))
        self._tasks[task] = audio_id
        task.add_done_callback(self._tasks.pop)
        return audio_id

    async def _run(self, audio_id: str, report: ResearchResult, style: Style) -> None:
        progress = self._progress[audio_id] = Progress()
        try:
            await self._make(audio_id, report, style, progress)
        finally:
            del self._progress[audio_id]
            if self._owners is not None:
                await self._owners.release(audio_id)

    async def _make(self, audio_id: str, report: ResearchResult, style: Style, progress: Progress) -> None:
        try:
            data, media_type, extension, duration = await make_audio(self._settings, report, style, progress.spoke)
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
        stored = await asyncio.to_thread(
            self._store.finish_audio, audio_id, error=None, media_type=media_type, duration_s=duration
        )
        if not stored:  # its session was deleted while it was made: nothing points to the file
            await asyncio.to_thread(remove_audio_file, self._store, audio_id)

    async def shutdown(self) -> None:
        """Cancel the jobs in flight; each ends as failed, so nobody polls a pending job forever."""
        if self._watching is not None:
            await self._watching.stop()
        live = dict(self._tasks)
        for task in live:
            task.cancel()
        await asyncio.gather(*live, return_exceptions=True)
        for task, audio_id in live.items():
            if task.cancelled():
                await asyncio.to_thread(self._store.finish_audio, audio_id, error=SHUTDOWN_MESSAGE)
        if self._owners is not None:
            await self._owners.close()
