"""Warm litellm in a long-lived process before its first run needs it.

A process's first model call pays for importing litellm and for what its first call loads (its
token counter and more of its types, and its tool path for a call that offers tools), which a
server would otherwise charge to the first run after start. A server's engine warms the path of
every model it is configured with (a CLI command warms a generic one while its run starts, see
`setup.preload`).
"""

from __future__ import annotations

from typing import get_args

from sleuth.config import Role, Settings
from sleuth.llm.capabilities import cost_usd
from sleuth.llm.offline_registration import litellm_model_name
from sleuth.llm.setup import warm_tool_path


def warm_litellm(settings: Settings) -> None:
    """Synchronous on purpose: a caller with an event loop runs it on a thread, so the loop keeps
    serving while litellm imports and builds its schemas."""
    models = list(dict.fromkeys(settings.model_for(role) for role in get_args(Role)))
    warm_tool_path(litellm_model_name(model) for model in models)
    for model in models:
        cost_usd(model, 1, 1)  # loads the cost map lookup a run's first usage report needs
