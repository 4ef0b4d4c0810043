"""One model call on behalf of a step: the gateway call plus its `usage` packet and run totals, and
the cap on its output (streamed text stops at the cap, the kept text is cut to it, and a cut says so)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sleuth.config import Role
from sleuth.llm.tokens import count_tokens, token_bound, truncate_tokens
from sleuth.llm.types import LLMResult, StreamHandlers
from sleuth.research.state import RunState
from sleuth.stream.packets import Degraded, Usage


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


class OutputCap:
    """Forwards streamed deltas until about `max_tokens`, then drops the rest of the stream.

    A model may ignore `max_tokens` (or a provider may count differently), so the cap is also
    enforced here, on what Sleuth shows and keeps.
    """

    def __init__(self, what: str, max_tokens: int, forward: Callable[[str], None] | None = None) -> None:
        self.what = what
        self.max_tokens = max_tokens
        self._forward = forward
        # Summed per group of deltas: a slight over-count, so the stream never shows more than the cap.
        self._streamed = 0
        # Deltas not counted yet: a text has at most as many tokens as UTF-8 bytes, so they are
        # counted together, and only once the cap could be within their reach.
        self._pending: list[str] = []
        self._pending_bytes = 0
        self.cut = False

    def on_text(self, delta: str) -> None:
        if self._streamed > self.max_tokens:
            return
        self._pending.append(delta)
        self._pending_bytes += token_bound(delta)
        if self._streamed + self._pending_bytes > self.max_tokens:
            self._streamed += count_tokens("".join(self._pending))
            self._pending.clear()
            self._pending_bytes = 0
        if self._forward is not None:
            self._forward(delta)

    def keep(self, text: str, finish_reason: str | None = None) -> str:
        """`text` within the cap; remembers whether it was cut, here or by the provider (`length`)."""
        kept = truncate_tokens(text, self.max_tokens)
        self.cut = self.cut or kept != text or finish_reason == "length"
        return kept

    def degraded(self) -> Degraded:
        return Degraded(
            level="output_cut", detail=f"The {self.what} was longer than {self.max_tokens} tokens and was cut there."
        )
