"""Warm litellm in a long-lived process before its first run needs it.

A process's first model call pays for importing litellm and, on the first call that offers
tools, for its tool/MCP modules and their pydantic schemas: seconds, which a server would
otherwise charge to the first run after start. `warm_litellm` makes one mocked streamed call
with a tool per configured model: litellm walks the same path as a real call (provider
resolution, tool handling, stream wrapper, cost lookup) but answers itself, so nothing leaves
the machine and no key is spent.
"""

from __future__ import annotations

import logging
from typing import Any, get_args

from sleuth.config import Role, Settings
from sleuth.llm.capabilities import cost_usd
from sleuth.llm.offline_registration import litellm_model_name
from sleuth.llm.setup import litellm_module

log = logging.getLogger(__name__)

_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "warm_up", "description": "Warm-up.", "parameters": {"type": "object", "properties": {}}},
}


def warm_litellm(settings: Settings) -> None:
    """Import litellm and run one mocked tool-offering streamed call per distinct model.

    Synchronous on purpose: a caller with an event loop runs it on a thread, so the loop keeps
    serving while litellm imports and builds its schemas.
    """
    litellm = litellm_module()
    for model in dict.fromkeys(settings.model_for(role) for role in get_args(Role)):
        try:
            stream = litellm.completion(
                model=litellm_model_name(model),
                messages=[{"role": "user", "content": "warm-up"}],
                tools=[_TOOL],
                tool_choice="auto",
                stream=True,
                stream_options={"include_usage": True},
                mock_response="ok",
                max_retries=0,
                num_retries=0,
            )
            for _ in stream:
                pass
            cost_usd(model, 1, 1)
        except Exception as exc:  # a model litellm cannot resolve fails for real at the run's preflight
            log.info("warm-up of %s skipped: %s", model, type(exc).__name__)
