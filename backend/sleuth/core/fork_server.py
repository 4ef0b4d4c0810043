"""multiprocessing's fork server: one per process, shared by everything that forks children from it
(the engine processes, the extraction of an upload).

A fork server is a fresh interpreter that imports the modules it is asked to preload, then forks
each child from itself: a child starts with those imported, and with none of the threads of the
process that asked for it. `multiprocessing` keeps one per process, and reads the list of modules
only when it starts it (again, if it died). So no user sets the list alone: each names what its
children need, and the fork server preloads everything named before it started. A user that comes
later gets it as it is; its children import what they miss.
"""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.context import ForkServerContext

_lock = threading.Lock()
_preload: list[str] = []


def fork_server(*preload: str) -> ForkServerContext:
    """The fork server's context, `preload` added to what it imports when it (re)starts."""
    with _lock:
        _preload.extend(module for module in preload if module not in _preload)
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(_preload))
        return context
