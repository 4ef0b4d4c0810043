"""Whether a configured model can be reached at all, asked of litellm before any call is made."""

from __future__ import annotations

from sleuth.core import heavy
from sleuth.llm.runtime import is_offline, litellm_model_name

# litellm lists an endpoint variable as missing for these, but they have a working default (localhost).
_DEFAULT_ENDPOINT = {"OLLAMA_API_BASE"}


def model_access_problem(model: str, api_key: str | None, api_base: str | None) -> str | None:
    """Why `model` cannot be called with these credentials (unknown provider, missing key); None if it can."""
    if is_offline(model):
        return None
    litellm = heavy.litellm
    name = litellm_model_name(model)
    try:
        litellm.get_llm_provider(name)
    except Exception:
        return f"unknown model {model!r}: name its provider, e.g. openai/gpt-4o-mini or ollama_chat/llama3.1"
    try:
        found = litellm.validate_environment(model=name, api_key=api_key, api_base=api_base)
    except Exception:  # litellm could not say: let the first call tell
        return None
    missing = [key for key in found.get("missing_keys") or [] if key not in _DEFAULT_ENDPOINT]
    if missing:
        return f"the model {model} needs {', '.join(missing)} (for a key, SLEUTH_API_KEY works too)"
    return None
