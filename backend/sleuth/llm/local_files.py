"""Points litellm and tiktoken at the files installed with litellm, before either loads: the
machine may be offline, and neither may download its cost map or encodings."""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path


def _tiktoken_dir() -> str | None:
    spec = find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return str(path) if path.is_dir() else None


def use_local_files() -> None:
    """litellm's bundled cost map, and its bundled tiktoken encodings (cl100k, o200k)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    tiktoken_dir = _tiktoken_dir()
    if tiktoken_dir:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", tiktoken_dir)
