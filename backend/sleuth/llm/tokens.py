"""Token counting and truncation with tiktoken, using encodings available offline."""

from __future__ import annotations

from functools import cache
from typing import Any

from sleuth.core import heavy


@cache
def _encoding() -> heavy.tiktoken.Encoding:
    return heavy.tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def token_bound(text: str) -> int:
    """At least the tokens of `text`, without tokenizing it: every token stands for one UTF-8 byte or more."""
    return len(text.encode("utf-8", "surrogatepass"))


def surely_fits(text: str, max_tokens: int) -> bool:
    """True when `text` has at most `max_tokens` tokens, told without tokenizing it; False says nothing."""
    return len(text) <= max_tokens and token_bound(text) <= max_tokens  # never fewer bytes than characters


def truncate_tokens(text: str, max_tokens: int) -> str:
    """Cut `text` to at most `max_tokens`, preferring to end at a sentence or line boundary."""
    if surely_fits(text, max_tokens):
        return text
    enc = _encoding()
    tokens = enc.encode(text, disallowed_special=())
    if len(tokens) <= max_tokens:
        return text
    cut = enc.decode(tokens[:max_tokens])
    boundary = max(cut.rfind(". "), cut.rfind(".\n"), cut.rfind("\n"))
    if boundary > len(cut) // 2:
        cut = cut[: boundary + 1]
    return cut.rstrip()


def count_message_tokens(messages: list[dict[str, Any]]) -> int:
    """Tokens of chat messages as sent: each message's text, tool-call names and arguments."""
    parts: list[str] = []
    for message in messages:
        parts.append(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            parts.append(str(function.get("name") or "") + str(function.get("arguments") or ""))
    return count_tokens("\n".join(parts))
