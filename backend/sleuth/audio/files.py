"""Where audio files live (beside the database, one file per audio id) and how a session's data is removed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sleuth.store.store import Store


def audio_dir(store: Store) -> Path:
    return store.data_dir / "audio"


def audio_file(store: Store, audio_id: str) -> Path | None:
    """The stored file of an audio id, whatever its format; None when there is none."""
    return next(iter(sorted(audio_dir(store).glob(f"{audio_id}.*"))), None)


async def delete_session_data(store: Store, session_id: str) -> None:
    """Rows first, in one transaction; then the audio files, which nothing points to any more.

    The store's NotFound and RunInProgress pass through. A job still making one of these files
    removes it itself when it finds its row gone (`AudioJobs`)."""
    for audio_id in await asyncio.to_thread(store.delete_session, session_id):
        remove_audio_file(store, audio_id)


def remove_audio_file(store: Store, audio_id: str) -> None:
    path = audio_file(store, audio_id)
    if path is not None:
        path.unlink(missing_ok=True)
