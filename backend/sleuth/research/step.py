"""One model call on behalf of a step: the gateway call plus its `usage` packet and run totals."""

from __future__ import annotations

from typing import Any

from sleuth.config import Role
from sleuth.llm.types import LLMResult, StreamHandlers
from sleuth.research.state import RunState
from sleuth.stream.packets import Usage


async def llm_step(
    state: RunState,
    role: Role,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: str | None = None,
    max_tokens: int | None = None,
    handlers: StreamHandlers | None = None,
    turn: int | None = None,
    tab: int = 0,
) -> LLMResult:
    """Call the model for `role` and account for it (a `usage` packet at the caller's place)."""
    started = state.clock.now()
    result = await state.gateway.complete(
        role, messages, tools=tools, tool_choice=tool_choice, max_tokens=max_tokens, handlers=handlers
    )
    state.pace.add(state.clock.now() - started)
    if result.usage is not None:
        usage = result.usage
        state.totals.add(usage)
        state.emit(
            Usage(
                role=role,
                model=usage.model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cost_usd=usage.cost_usd,
            ),
            turn=turn,
            tab=tab,
        )
    return result
