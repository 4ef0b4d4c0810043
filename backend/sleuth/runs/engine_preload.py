"""Imported by the fork server that engine processes are forked from, and by nothing else.

`multiprocessing`'s fork server is a fresh interpreter that imports the modules it is told to
preload (`runs/engine_process.py` names this one), then forks a child for each engine. Importing this
module loads what every engine loads alike (`load_shared`: litellm, the engine's libraries, the
templates), so those pages are held once and shared copy-on-write rather than once per engine.
`gc.freeze` then moves every object loaded so far out of the collector's reach: a child's collection
would otherwise write to each object's header and so copy the page it lives on.

The import cannot fail: a fork server whose preload raised would start no engine at all, so a
failure is logged and each engine then loads what it needs in its own warm-up.
"""

from __future__ import annotations

import gc
import logging
import threading

from sleuth.runs import engine_main  # noqa: F401  # what every engine runs, imported once for all of them
from sleuth.runs.warmup import load_shared

log = logging.getLogger(__name__)


def _prepare() -> None:
    try:
        load_shared()
    except Exception:
        log.exception("the engines' fork server could not load what they share; each engine loads it")
    if threading.active_count() > 1:  # a child would hold a copy of a lock some thread may have held
        log.warning("the engines' fork server has %d threads before forking", threading.active_count())
    gc.collect()
    gc.freeze()


_prepare()
