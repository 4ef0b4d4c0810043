"""Plain data the gateway returns: tool calls, results, usage."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolCall:
    """A tool call as the model sent it, plus what the repair layer made of it."""

    id: str
    name: str
    arguments: str
    resolved_name: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.resolved_name is not None and self.parsed is not None

    def as_message_call(self) -> dict[str, Any]:
        """The call as it goes back into the conversation (with the repaired name when known)."""
        name = self.resolved_name or self.name or "unknown_tool"
        arguments = json.dumps(self.parsed) if self.parsed is not None else (self.arguments or "{}")
        return {"id": self.id, "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass
class Tokens:
    """Tokens and cost: of one model call, or summed over a run."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Tokens) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd


@dataclass
class CallUsage(Tokens):
    """One model call's usage, with who made it and with which model."""

    role: str = ""
    model: str = ""


@dataclass
class LLMResult:
    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: CallUsage | None = None
    truncated: bool = False  # the stream broke after output had already been delivered

    def assistant_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = [call.as_message_call() for call in self.tool_calls]
        return message


TextHandler = Callable[[str], Awaitable[None] | None]
ToolDeltaHandler = Callable[[int, str, str], Awaitable[None] | None]
FinishHandler = Callable[[str, str], Awaitable[None] | None]


@dataclass
class StreamHandlers:
    """Callbacks for output as it arrives. A handler may be sync or async."""

    on_text: TextHandler | None = None
    on_reasoning: TextHandler | None = None
    # (tool call index, tool name so far, new arguments fragment)
    on_tool_delta: ToolDeltaHandler | None = None
    # (the whole text, the finish reason): once the model has finished, before its usage arrives,
    # which litellm hands over only after rebuilding the whole response from its chunks
    on_finish: FinishHandler | None = None
