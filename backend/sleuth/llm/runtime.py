"""litellm as Sleuth runs it: configured once it has loaded, the offline model registered, and its
first call's path warmed.

litellm loads through `core/heavy.py`. Importing this module arranges that, whichever thread loads
it, litellm is configured before anyone can call it: debug output and telemetry off, parameters a
provider does not take dropped, and the embedded `offline` model registered as a custom provider.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from importlib import import_module

from sleuth.core import heavy
from sleuth.llm.offline.provider import offline_handler

log = logging.getLogger(__name__)

OFFLINE_PROVIDER = "offline"
OFFLINE_MODEL = "offline/extractive"

# A tool schema for the warm-up call: offering any tool makes litellm load its tool-call path.
_WARM_TOOL = {
    "type": "function",
    "function": {"name": "warm_up", "description": "", "parameters": {"type": "object", "properties": {}}},
}

# What litellm's first real streamed call still imports after the mocked one: the OpenAI SDK's
# client resources, anyio's asyncio backend (the end-of-stream thread hop) and litellm's service
# logger. Imported on the event loop they would hold it mid-run; in the warm-up they cost it nothing.
# A name that a later version no longer has is skipped.
_FIRST_CALL_MODULES = ("openai.resources", "anyio._backends._asyncio", "litellm._service_logger")


def litellm_model_name(model: str) -> str:
    """Map the settings' model string to what litellm is called with."""
    return OFFLINE_MODEL if model == OFFLINE_PROVIDER else model


def is_offline(model: str) -> bool:
    return model == OFFLINE_PROVIDER or model.startswith(OFFLINE_PROVIDER + "/")


def _configure() -> None:
    litellm = heavy.litellm
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.drop_params = True
    if not any(item.get("provider") == OFFLINE_PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": OFFLINE_PROVIDER, "custom_handler": offline_handler()})
        heavy.custom_llm_setup()  # type: ignore[no-untyped-call]  # litellm leaves it unannotated


heavy.on_load("litellm", _configure)


async def litellm_ready() -> None:
    """litellm loaded and configured, and warmed when a warm-up was asked for: awaited on the event
    loop, so a run can start while it loads. A call made while the warm-up still imports litellm's
    modules on the other thread could meet a half-initialised one, so the warm-up is waited for too."""
    await heavy.ready("litellm")


def import_first_call_modules() -> None:
    """What litellm's first real call imports besides litellm itself (`_FIRST_CALL_MODULES`)."""
    heavy.load("litellm")
    for name in _FIRST_CALL_MODULES:
        try:
            import_module(name)
        except ImportError:
            log.debug("litellm warm-up: no module %s", name)


def warm_tool_path(models: Iterable[str] = ("openai/warm-up",)) -> None:
    """One mocked streamed call offering a tool per model: litellm walks the path of a real call
    (provider resolution, tool handling, stream wrapper, cost lookup) and loads what its first real
    tool call needs, but answers itself, so nothing leaves the machine and no key is spent."""
    litellm = heavy.litellm
    import_first_call_modules()
    for model in models:
        try:
            response = litellm.completion(
                model=litellm_model_name(model),
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
