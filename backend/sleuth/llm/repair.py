"""The repair layer: what to do with the tool calls and messages models get slightly wrong."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from sleuth.core import heavy
from sleuth.llm.prompting import render
from sleuth.llm.types import ToolCall

EMPTY_ASSISTANT = "(no text)"
EMPTY_TOOL = "(the tool returned nothing)"


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def resolve_tool_name(name: str, available: list[str]) -> str | None:
    """The real tool a possibly mangled name means, or None when it is unknown or ambiguous."""
    if name in available:
        return name
    candidate = name.strip().split(".")[-1].split(":")[-1].strip()  # "functions.search", "tool:search"
    if candidate in available:
        return candidate
    squashed = {_squash(tool): tool for tool in available}
    if _squash(candidate) in squashed:
        return squashed[_squash(candidate)]
    prefixed = [tool for tool in squashed if tool.startswith(_squash(candidate))]
    if len(prefixed) > 1:
        return None  # "generate" could be generate_plan or generate_report
    close = difflib.get_close_matches(_squash(candidate), list(squashed), n=2, cutoff=0.75)
    if len(close) == 1:
        return squashed[close[0]]
    if len(close) == 2:
        first = difflib.SequenceMatcher(None, _squash(candidate), close[0]).ratio()
        second = difflib.SequenceMatcher(None, _squash(candidate), close[1]).ratio()
        if first - second >= 0.1:
            return squashed[close[0]]
    return None


def _strip_fences(text: str) -> str:
    text = text.strip()
    match = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.S)
    return match.group(1) if match else text


# Only these refuse a call: counts and lengths (maxItems ...) are trimmed by the engine instead,
# so a model that sends four queries still gets three searched rather than an error.
_REFUSING = frozenset({"required", "type"})


def _argument_errors(parsed: dict[str, Any], params: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(missing required arguments, arguments of the wrong type), by JSON Schema validation."""
    missing: list[str] = []
    wrong: list[str] = []
    for error in heavy.Draft202012Validator(params).iter_errors(parsed):
        if error.validator not in _REFUSING:
            continue
        if error.validator == "required" and not error.path:
            missing.extend(name for name in error.validator_value if name not in parsed and name not in missing)
        elif error.path and str(error.path[0]) not in wrong:
            wrong.append(str(error.path[0]))
    return missing, wrong


def repair_tool_call(call: ToolCall, schemas: dict[str, dict[str, Any]]) -> ToolCall:
    """Resolve the name and parse/validate the arguments; set `error` to a message for the model."""
    available = list(schemas)
    resolved = resolve_tool_name(call.name, available)
    if resolved is None:
        call.error = render("responses/tool_unavailable", name=call.name, available=", ".join(available))
        return call
    call.resolved_name = resolved
    raw = _strip_fences(call.arguments or "") or "{}"
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        call.error = f"The arguments for '{resolved}' are not valid JSON ({exc.msg}). Call it again with a JSON object."
        return call
    if not isinstance(parsed, dict):
        call.error = f"The arguments for '{resolved}' must be a JSON object."
        return call
    missing, wrong = _argument_errors(parsed, schemas[resolved].get("parameters", {}))
    if missing:
        call.error = f"'{resolved}' is missing required argument(s): {', '.join(missing)}."
        return call
    if wrong:
        call.error = f"'{resolved}' got argument(s) of the wrong type: {', '.join(wrong)}."
        return call
    call.parsed = parsed
    return call


def sanitize_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace empty content that some providers reject, without touching the caller's list."""
    clean: list[dict[str, Any]] = []
    for message in messages:
        message = dict(message)
        content = message.get("content")
        empty = content is None or (isinstance(content, str) and not content.strip())
        if message.get("role") == "assistant" and empty:
            message["content"] = None if message.get("tool_calls") else EMPTY_ASSISTANT
        elif message.get("role") == "tool" and empty:
            message["content"] = EMPTY_TOOL
        elif message.get("role") in ("user", "system") and empty:
            message["content"] = "(empty)"
        clean.append(message)
    return clean
