"""Making a report's audio in the background: script, speech, file; its row says pending, done or failed.

A report has at most one audio per style pending or done: asking again gives that one. A server
makes at most `SLEUTH_AUDIO_MAX_JOBS` at once and, scaled out, all servers together at most
`SLEUTH_AUDIO_MAX_JOBS_CLUSTER`; past either, a request is refused (`AudioFull`) rather than queued.

Crash safety: a job whose process died is ended as failed at start-up, never left pending. Failed
rather than re-queued: a job that brought its server down (a huge report, a speech engine that
hangs) would do it again on every start, while asking again is one click in the player. Runs are
ended the same way, not resumed. Each row names its owner (host, pid); jobs of a live sibling
process on the same host are left alone.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from sleuth.audio.encoding import Encoding, available_encoding
from sleuth.audio.files import audio_dir, audio_file, remove_audio_file
from sleuth.audio.script import ScriptError, Style, script_for
from sleuth.audio.speech import Spoken, SpokenLines, output_of, speak
from sleuth.config import Settings
from sleuth.core.background import Periodic
from sleuth.core.ids import new_id
from sleuth.llm.speech import SpeechError
from sleuth.store.recovery import process_is_dead, this_host
from sleuth.store.store import Store
from sleuth.stream.results import ResearchResult

log = logging.getLogger(__name__)

FILE_GONE_MESSAGE = "its file is no longer there; ask for it again"
RESTART_MESSAGE = "interrupted by a server restart; ask for it again"
SHUTDOWN_MESSAGE = "interrupted by a server shutdown; ask for it again"
LOST_MESSAGE = "interrupted: the server making it stopped; ask for it again"  # scaled out, any server says so


async def make_audio(
    settings: Settings,
    report: ResearchResult,
    style: Style,
    path: Path,
    encoding: Encoding,
    on_line: SpokenLines | None = None,
) -> Spoken:
    """The report spoken in `style`, written to `path`; `on_line` as in `speak`."""
    lines = await script_for(settings, report, style)
    return await speak(settings, lines, path, encoding, on_line)


class AudioFull(Exception):
    """No job can start now: the limit of jobs at once is reached. The message is safe to show."""


@dataclass(frozen=True)
class Started:
    audio_id: str
    new: bool  # False: the report's audio in this style was already pending or done, and this is it


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
    max_jobs: int  # across every server

    async def hold(self, audio_id: str) -> bool: ...
    async def release(self, audio_id: str) -> None: ...
    async def renew(self, audio_ids: list[str]) -> None: ...
    async def alive(self, audio_ids: list[str]) -> set[str]: ...
    async def close(self) -> None: ...


class AudioJobs:
    """Owned by the server; jobs run on its event loop (speech itself runs in subprocesses or a provider).

    With `owners` (servers sharing one store), each job is held while it is made, and the jobs
    that no live server holds are ended, at start and then periodically."""

    def __init__(
        self, settings: Settings, store: Store, owners: JobOwners | None = None, encoding: Encoding | None = None
    ) -> None:
        self._settings = settings
        self._store = store
        self._owners = owners
        self._encoding = encoding or available_encoding()
        # Starts one at a time: a burst of requests for one audio finds the first one's job (rather than
        # each taking a slot before any job exists), and no burst passes the limit. A start is short.
        self._starting = asyncio.Lock()
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

    async def start(self, report: ResearchResult, session_id: str, style: Style) -> Started:
        """The report's audio in `style`: the one pending or done, else a new job; AudioFull past a limit."""
        report_id = str(report.report_id)
        async with self._starting:
            existing = await asyncio.to_thread(self._store.live_audio, report_id, style)
            if existing is not None and not await self._file_is_gone(existing):
                return Started(str(existing["id"]), new=False)
            most = self._settings.audio_max_jobs
            if len(self._tasks) >= most:
                raise AudioFull(f"this server is making its maximum of {most} audio files at once; retry later")
            return await self._start(report_id, report, session_id, style)

    async def _file_is_gone(self, row: dict[str, Any]) -> bool:
        """A done audio whose file was removed (a data dir cleaned by hand) is failed, so it can be made again."""
        if row["status"] != "done" or await asyncio.to_thread(audio_file, self._store, str(row["id"])) is not None:
            return False
        await asyncio.to_thread(self._store.finish_audio, str(row["id"]), error=FILE_GONE_MESSAGE)
        return True

    async def _start(self, report_id: str, report: ResearchResult, session_id: str, style: Style) -> Started:
        audio_id = new_id("a")
        owners = self._owners
        if owners is not None and not await owners.hold(audio_id):  # before its row: a pending row has its holder
            raise AudioFull(
                f"the servers are making their maximum of {owners.max_jobs} audio files at once; retry later"
            )
        try:
            live_id = await asyncio.to_thread(
                self._store.create_audio,
                audio_id,
                report_id,
                session_id,
                style,
                owner_host=this_host(),
                owner_pid=os.getpid(),
            )
        except BaseException:
            if owners is not None:
                await owners.release(audio_id)
            raise
        if live_id != audio_id:  # a request for the same audio, here or on another server, got there first
            if owners is not None:
                await owners.release(audio_id)
            return Started(live_id, new=False)
        task = asyncio.create_task(self._run(audio_id, report, style))
        self._tasks[task] = audio_id
        task.add_done_callback(self._tasks.pop)
        return Started(audio_id, new=True)

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
            folder = audio_dir(self._store)
            await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
            _, extension = output_of(self._settings, self._encoding)
            path = folder / f"{audio_id}.{extension}"
            spoken = await make_audio(self._settings, report, style, path, self._encoding, progress.spoke)
        except (ScriptError, SpeechError) as exc:
            await asyncio.to_thread(self._store.finish_audio, audio_id, error=str(exc))
            return
        except Exception as exc:  # a bug still ends the job with a status, never a pending row forever
            log.exception("audio %s failed", audio_id)
            await asyncio.to_thread(self._store.finish_audio, audio_id, error=f"internal error: {type(exc).__name__}")
            return
        stored = await asyncio.to_thread(
            self._store.finish_audio, audio_id, error=None, media_type=spoken.media_type, duration_s=spoken.duration_s
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


def fail_orphaned_audio(store: Store) -> list[str]:
    """Mark every pending audio job of a dead process failed; returns their ids."""
    failed = []
    for row in store.pending_audio():
        if process_is_dead(row["owner_host"], row["owner_pid"]):
            store.finish_audio(row["id"], error=RESTART_MESSAGE)
            failed.append(row["id"])
    return failed
