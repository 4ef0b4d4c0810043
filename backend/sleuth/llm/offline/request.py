"""What the offline model can see of a request: messages, offered tools, tool choice, limits.

This is the model's whole world. It is built from the litellm call alone, exactly as a hosted
model would receive it; nothing here reaches into the engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sleuth.llm.prompt_facts import PromptFacts, read_facts

F = TypeVar("F", bound=PromptFacts)


def _text(content: Any) -> str:
    """Message content as text (OpenAI allows a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


@dataclass
class ToolExchange:
    """One tool call the model made earlier in the conversation, with the result it got."""

    turn: int  # index of the assistant message that made the call (0-based among assistant turns)
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str | None  # None: no tool message answered it (yet)


@dataclass
class Reply:
    """What the model decided to say: text, tool calls, or both."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class OfflineRequest:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    tool_choice: Any = None
    max_tokens: int | None = None

    @classmethod
    def from_call(cls, messages: list[Any], optional_params: dict[str, Any] | None) -> OfflineRequest:
        params = optional_params or {}
        clean = [dict(m) if isinstance(m, dict) else dict(getattr(m, "__dict__", {})) for m in messages or []]
        tools = [t for t in params.get("tools") or [] if isinstance(t, dict)]
        max_tokens = params.get("max_tokens") or params.get("max_completion_tokens")
        return cls(clean, tools, params.get("tool_choice"), int(max_tokens) if max_tokens else None)

    # ---- tools --------------------------------------------------------------------------

    @property
    def tool_names(self) -> set[str]:
        return {str((t.get("function") or {}).get("name", "")) for t in self.tools} - {""}

    def offers(self, name: str) -> bool:
        return name in self.tool_names

    # ---- messages -----------------------------------------------------------------------

    def facts(self, kind: type[F]) -> F | None:
        """The latest facts block of `kind` in the conversation (what the prompts declare for machines)."""
        return read_facts([_text(m.get("content")) for m in self.messages], kind)

    def texts(self, role: str) -> list[str]:
        return [_text(m.get("content")) for m in self.messages if m.get("role") == role]

    @property
    def system(self) -> str:
        return "\n".join(self.texts("system"))

    @property
    def first_user(self) -> str:
        users = self.texts("user")
        return users[0] if users else ""

    @property
    def last_user(self) -> str:
        users = self.texts("user")
        return users[-1] if users else ""

    @property
    def assistant_turns(self) -> int:
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    def answered_after_assistant(self) -> bool:
        """True when a user message follows an assistant message with text (an answer to it)."""
        seen_assistant_text = False
        for message in self.messages:
            if message.get("role") == "assistant" and _text(message.get("content")).strip():
                seen_assistant_text = True
            elif message.get("role") == "user" and seen_assistant_text and _text(message.get("content")).strip():
                return True
        return False

    def exchanges(self) -> list[ToolExchange]:
        """Every earlier tool call, paired with its result by `tool_call_id`."""
        results = {
            str(m.get("tool_call_id")): _text(m.get("content")) for m in self.messages if m.get("role") == "tool"
        }
        out: list[ToolExchange] = []
        turn = -1
        for message in self.messages:
            if message.get("role") != "assistant":
                continue
            turn += 1
            for call in message.get("tool_calls") or []:
                call = call if isinstance(call, dict) else getattr(call, "model_dump", dict)()
                function = call.get("function") or {}
                raw = function.get("arguments") or "{}"
                try:
                    arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
                except (ValueError, TypeError):
                    arguments = {}
                call_id = str(call.get("id", ""))
                out.append(
                    ToolExchange(
                        turn,
                        call_id,
                        str(function.get("name", "")),
                        arguments if isinstance(arguments, dict) else {},
                        results.get(call_id),
                    )
                )
        return out
