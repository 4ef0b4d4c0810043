"""The one warm-up: a process about to run research pays its one-off costs off the event loop.

A process's first run would otherwise pay, on its loop, for importing litellm and what litellm's
first call loads (its token counter, more of its types, its tool path), for the libraries a run uses
only once under way (tool-argument validation, report markdown, page and PDF extraction) and for
compiling the prompt templates. A CLI run queues all of that on the preload thread as it starts and
sends its first packet meanwhile (`start_for_cli`); a server's engine process warms the path of
every model it is configured with before it says it is ready (`warm_engine`), after its fork server
loaded what every engine shares (`load_shared`).
"""

from __future__ import annotations

import logging
from typing import get_args

from sleuth.config import Role, Settings
from sleuth.core import heavy
from sleuth.llm.capabilities import cost_usd
from sleuth.llm.prompting import compile_all
from sleuth.llm.runtime import import_first_call_modules, warm_tool_path
from sleuth.tools.factory import build_toolbox

log = logging.getLogger(__name__)

# Libraries a run uses only once it is under way: imported before its first packet, they would delay it.
ENGINE_LIBRARIES = ("jsonschema", "markdown_it", "bs4", "pypdf")


def start_for_cli() -> None:
    """On the preload thread, after litellm's import (which the command table started): litellm's
    tool path for a generic model, then the engine's libraries and templates. Returns at once."""
    heavy.preload("litellm", then=warm_tool_path)
    heavy.preload(*ENGINE_LIBRARIES, then=compile_all)


def load_shared() -> None:
    """What every engine process loads alike, whatever its settings: litellm and what its first
    call imports, the engine's libraries, the compiled templates. Imports and compiling only: no
    call, so no library starts a thread (the fork server forks engines from the process that ran
    this)."""
    import_first_call_modules()
    heavy.load(*ENGINE_LIBRARIES)
    compile_all()


def warm_engine(settings: Settings) -> None:
    """Everything a server's engine process would otherwise pay in its first run: litellm's path
    for each configured model, the cost lookup of a run's first usage report, the engine's
    libraries and templates, and the search tools. Synchronous: the engine runs it on a thread, so
    its loop keeps serving commands (a cancel) meanwhile."""
    models = list(dict.fromkeys(settings.model_for(role) for role in get_args(Role)))
    warm_tool_path(models)
    for model in models:
        cost_usd(model, 1, 1)
    heavy.load(*ENGINE_LIBRARIES)
    compile_all()
    try:
        build_toolbox(settings, None, owner_id=None)
    except Exception as exc:  # e.g. a bad SLEUTH_SEARCH: each run's preflight refuses it with a message
        log.info("search tools not warmed: %s", exc)
