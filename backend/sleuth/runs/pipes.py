"""The two ends of the line between the server and an engine: a `multiprocessing` pipe to an engine
process, or `thread_pipe()` to an engine on a thread of the server's own process.

Both ends behave as a process pipe does: a message is a copy (pickled, so a message that could not
cross to a process fails here too), and closing either end ends the reads of both with `EOFError`.
"""

from __future__ import annotations

import pickle
import queue
import threading
from typing import Any, Protocol

_CLOSED = object()  # what a closed end leaves in an inbox: every read after it ends


class EnginePipe(Protocol):
    def send(self, obj: Any) -> None: ...
    def recv(self) -> Any: ...
    def close(self) -> None: ...


class ThreadPipeEnd:
    def __init__(
        self, inbox: queue.SimpleQueue[object], outbox: queue.SimpleQueue[object], closed: threading.Event
    ) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = closed  # shared by both ends: once one closes, sending either way fails

    def send(self, obj: Any) -> None:
        if self._closed.is_set():
            raise BrokenPipeError("the other end of the engine pipe is closed")
        self._outbox.put(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))

    def recv(self) -> Any:
        item = self._inbox.get()
        if item is _CLOSED:
            self._inbox.put(_CLOSED)  # for the next read, and any other reader
            raise EOFError
        assert isinstance(item, bytes)
        return pickle.loads(item)

    def close(self) -> None:
        self._closed.set()
        self._outbox.put(_CLOSED)
        self._inbox.put(_CLOSED)


def thread_pipe() -> tuple[ThreadPipeEnd, ThreadPipeEnd]:
    """A duplex pipe inside one process: (server's end, engine's end)."""
    to_engine: queue.SimpleQueue[object] = queue.SimpleQueue()
    to_server: queue.SimpleQueue[object] = queue.SimpleQueue()
    closed = threading.Event()
    return ThreadPipeEnd(to_server, to_engine, closed), ThreadPipeEnd(to_engine, to_server, closed)
