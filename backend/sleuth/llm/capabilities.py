"""What a model can do, asked of litellm's model table (overridable by settings)."""

from __future__ import annotations

from sleuth.llm.offline_registration import is_offline, litellm_model_name
from sleuth.llm.setup import litellm_module


def supports_reasoning(model: str, override: bool | None = None) -> bool:
    """Native reasoning models get no `think_tool` and fewer orchestrator cycles."""
    if override is not None:
        return override
    if is_offline(model):
        return False
    litellm = litellm_module()
    try:
        return bool(litellm.supports_reasoning(model=litellm_model_name(model)))
    except Exception:  # unknown model: litellm raises rather than answering
        return False


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float:
    """Price of a call from litellm's table; 0 for models it does not know (or local ones)."""
    if is_offline(model):
        return 0.0
    litellm = litellm_module()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=litellm_model_name(model), prompt_tokens=input_tokens, completion_tokens=output_tokens
        )
        return float(prompt_cost + completion_cost)
    except Exception:
        return 0.0
