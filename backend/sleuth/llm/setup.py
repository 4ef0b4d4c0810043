"""Process-wide litellm preparation, done once before litellm is first imported."""

from __future__ import annotations

import os
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType


def _tiktoken_dir() -> str | None:
    spec = find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return str(path) if path.is_dir() else None


@cache
def litellm_module() -> ModuleType:
    """Import litellm configured for an offline machine: local cost map, bundled tiktoken files."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    tiktoken_dir = _tiktoken_dir()
    if tiktoken_dir:
        # tiktoken cannot download encodings here; litellm ships cl100k/o200k under this name.
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", tiktoken_dir)
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.drop_params = True
    from sleuth.llm.offline_registration import register_offline_provider

    register_offline_provider(litellm)
    return litellm
