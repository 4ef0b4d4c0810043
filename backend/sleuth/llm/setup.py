"""Process-wide litellm preparation, done once before litellm is first imported.

Importing litellm and making its first call (which loads its token counter and more of its
types) is the costliest part of a process's start-up. `preload` starts that work on a background
thread as a command starts, so a run can send its first packet meanwhile; `litellm_ready` awaits
it without blocking the event loop.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from collections.abc import Callable, Iterable
from importlib import import_module
from types import ModuleType
from typing import TypeVar, cast

from sleuth.llm.local_files import use_local_files

log = logging.getLogger(__name__)

T = TypeVar("T")

_lock = threading.RLock()  # held while litellm loads
_starting = threading.Lock()  # held only to start the preload thread: a second `preload` never waits for the load
_module: ModuleType | None = None
_preloading: threading.Thread | None = None
_warmed = threading.Event()  # set when the preload's litellm part is done (the thread may go on)

# A tool schema for the warm-up call: offering any tool makes litellm load its tool-call path.
_WARM_TOOL = {
    "type": "function",
    "function": {"name": "warm_up", "description": "", "parameters": {"type": "object", "properties": {}}},
}


def _load() -> ModuleType:
    use_local_files()
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.drop_params = True
    from sleuth.llm.offline_registration import register_offline_provider

    register_offline_provider(litellm)
    return litellm


def litellm_module() -> ModuleType:
    """litellm, imported once (thread-safe) and configured for an offline machine: local cost map,
    bundled tiktoken files."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                _module = _load()
    return _module


async def litellm_ready() -> ModuleType:
    """litellm, loaded (and warmed, when `preload` started), waiting off the event loop.

    A preload under way is waited for until its warm-up is done, not just its import: a call made
    while the warm-up still imports litellm's modules on the other thread could meet a
    half-initialised one. The engine libraries it imports after that are the engine's own.
    """
    if _preloading is not None and not _warmed.is_set():
        await in_daemon_thread(_warmed.wait)
    if _module is not None:
        return _module
    return await in_daemon_thread(litellm_module)


async def in_daemon_thread(fn: Callable[[], T]) -> T:
    """`fn()` on a daemon thread of its own, awaited without blocking the event loop.

    Unlike `asyncio.to_thread`, nothing waits for it when the loop closes: `asyncio.run` joins the
    default executor's threads at its end, so a server stopped while litellm was still loading (slow
    on a loaded machine) could not exit until the import had finished.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.done():
            return  # the waiter was cancelled
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(cast(T, result))

    def run() -> None:
        error: BaseException | None = None
        result: T | None = None
        try:
            result = fn()
        except BaseException as exc:  # handed to the waiter, as asyncio.to_thread would
            error = exc
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:
            pass  # the loop has closed: nobody is waiting any more

    threading.Thread(target=run, name="sleuth-off-loop", daemon=True).start()
    return await done


# What litellm's first real streamed call still imports after the mocked one: the OpenAI SDK's
# client resources, anyio's asyncio backend (the end-of-stream thread hop) and litellm's service
# logger. Imported on the event loop they would hold it mid-run; here they cost it nothing. A name
# that a later version no longer has is skipped.
_FIRST_CALL_MODULES = ("openai.resources", "anyio._backends._asyncio", "litellm._service_logger")


def warm_tool_path(models: Iterable[str] = ("openai/warm-up",)) -> None:
    """One mocked streamed call offering a tool per model: litellm walks the path of a real call
    (provider resolution, tool handling, stream wrapper, cost lookup) and loads what its first real
    tool call needs, but answers itself, so nothing leaves the machine and no key is spent."""
    litellm = litellm_module()
    for name in _FIRST_CALL_MODULES:
        try:
            import_module(name)
        except ImportError:
            log.debug("litellm warm-up: no module %s", name)
    for model in models:
        try:
            response = litellm.completion(
                model=model,
                api_key="warm-up",
                messages=[{"role": "user", "content": "warm up"}],
                tools=[_WARM_TOOL],
                stream=True,
                stream_options={"include_usage": True},
                mock_response="ok",
                max_retries=0,
            )
            for _ in response:
                pass
        except Exception as exc:  # a model litellm cannot resolve fails for real at the run's preflight
            # A warning with its message, not a note: the first run then pays for what the warm-up
            # would have loaded, or fails with the same error, and the log should say why first.
            log.warning("litellm warm-up of %s failed: %s: %s", model, type(exc).__name__, exc)


# Libraries the engine uses only once a run is under way (tool-argument validation, page and PDF
# extraction, report markdown): imported before the first packet, they would delay it.
ENGINE_LIBRARIES = ("jsonschema", "markdown_it", "bs4", "pypdf")


def prepare_engine() -> None:
    """Import what a run uses later and compile the prompt templates, in a process about to run
    research, off its event loop: a first use on the loop would hold it for the length of each."""
    for name in ENGINE_LIBRARIES:
        import_module(name)
    from sleuth.llm.prompting import compile_all

    compile_all()


def freeze_loaded(*, collect: bool) -> None:
    """Move everything alive now out of the collector's sight for good.

    What a process has imported (litellm's heap above all) lives as long as the process, so no
    later collection needs to walk it again, and exit does not either. `collect` first frees the
    garbage of the warm-up; it holds the interpreter for the whole pass, so a process whose event
    loop is already serving skips it (the little garbage frozen with the rest is never freed).
    """
    if collect:
        gc.collect()
    gc.freeze()


def _preload(warm_tools: bool) -> None:
    try:
        if warm_tools:
            warm_tool_path()
        else:
            litellm_module()
    except Exception as exc:  # warming is an optimisation; the first real call does the same work
        log.debug("litellm warm-up failed: %s", exc)
    finally:
        _warmed.set()
    try:
        if warm_tools:  # a run is starting: what it needs later loads while its first model call is out
            prepare_engine()
    finally:
        freeze_loaded(collect=False)
        gc.enable()


def preload(*, warm_tools: bool = True) -> None:
    """Start importing litellm, and with `warm_tools` warming its tool path, on a background thread
    (once per process). A process that makes no model call of its own (the server) needs only the
    import.

    The collector is paused until then: importing creates hundreds of thousands of objects and no
    garbage worth collecting, and every collection in between would walk all of them.
    """
    global _preloading
    with _starting:
        if _preloading is not None or _module is not None:
            return
        gc.disable()
        _preloading = threading.Thread(target=_preload, args=(warm_tools,), name="litellm-preload", daemon=True)
        _preloading.start()
