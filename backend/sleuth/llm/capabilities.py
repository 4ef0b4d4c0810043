"""What a model can do, asked of litellm's model table (overridable by settings)."""

from __future__ import annotations

from sleuth.core import heavy
from sleuth.llm.runtime import is_offline, litellm_model_name


def supports_reasoning(model: str, override: bool | None = None) -> bool:
    """Native reasoning models get no `think_tool` and fewer orchestrator cycles."""
    if override is not None:
        return override
    if is_offline(model):
        return False
    try:
        return bool(heavy.litellm.supports_reasoning(model=litellm_model_name(model)))
    except Exception:  # unknown model: litellm raises rather than answering
        return False


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float:
    """Price of a call from litellm's table; 0 for models it does not know (or local ones)."""
    if is_offline(model):
        return 0.0
    try:
        prompt_cost, completion_cost = heavy.litellm.cost_per_token(
            model=litellm_model_name(model), prompt_tokens=input_tokens, completion_tokens=output_tokens
        )
        return float(prompt_cost + completion_cost)
    except Exception:
        return 0.0
