"""The tools an agent is offered beside Sleuth's own (an MCP server's): which fit its task, and the
arguments to call them with.

A tool fits when its name and description share the task's terms (a focus term, or two of the
background's), as a search result's title and snippet do; it is called with the task's first query
in each required text argument. A tool that needs anything else (a number, a choice from a list) is
left alone: nothing here guesses a value. Read from the offered schemas only, as a hosted model reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sleuth.llm.offline.request import OfflineRequest
from sleuth.llm.offline.text import term_set

# The agent's own tools; any other offered tool is a server's.
OWN_TOOLS = frozenset({"search", "open_url", "think_tool", "generate_report"})
MIN_FIT = 2.0  # one focus term, or two background terms
MAX_CALLS = 2  # tools called per agent, best fitting first
# An optional text argument under one of these names takes the query; other optional ones are left out.
QUERY_NAMES = ("query", "q", "topic", "search", "text", "keywords", "term", "question", "subject")


@dataclass(frozen=True)
class OfferedTool:
    name: str
    description: str
    parameters: dict[str, Any]

    @property
    def words(self) -> str:
        """Its name as words (`notes__read_text_file`: "notes read text file") and its description."""
        return f"{self.name.replace('_', ' ')} {self.description}"


def offered_tools(request: OfflineRequest) -> list[OfferedTool]:
    """The offered tools that are not the agent's own, in the order offered."""
    found: list[OfferedTool] = []
    for tool in request.tools:
        function = tool.get("function") or {}
        name = str(function.get("name", ""))
        parameters = function.get("parameters")
        parameters = parameters if isinstance(parameters, dict) else {}
        if name and name not in OWN_TOOLS:
            found.append(OfferedTool(name, str(function.get("description") or ""), parameters))
    return found


def arguments_for(tool: OfferedTool, query: str) -> dict[str, Any] | None:
    """`query` in each required text argument; None when a required argument is not free text."""
    properties = tool.parameters.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = tool.parameters.get("required")
    required = [str(name) for name in required] if isinstance(required, list) else []
    arguments: dict[str, Any] = {}
    for name in required:
        schema = properties.get(name)
        if not isinstance(schema, dict) or schema.get("type") != "string" or "enum" in schema:
            return None
        arguments[name] = query
    if not required:
        for name in QUERY_NAMES:
            schema = properties.get(name)
            if isinstance(schema, dict) and schema.get("type") == "string" and "enum" not in schema:
                arguments[name] = query
                break
    return arguments


def fitting_calls(
    request: OfflineRequest, weight: Callable[[set[str]], float], query: str
) -> list[tuple[str, dict[str, Any]]]:
    """Calls of the offered server tools that fit the task (`weight`: how much of the task a set of
    terms holds), best first, at most `MAX_CALLS`; none of a tool this agent has called already."""
    called = {exchange.name for exchange in request.exchanges()}
    scored: list[tuple[float, int, str, dict[str, Any]]] = []
    for place, tool in enumerate(offered_tools(request)):
        if tool.name in called:
            continue
        fit = weight(term_set(tool.words))
        arguments = arguments_for(tool, query) if fit >= MIN_FIT else None
        if arguments is not None:
            scored.append((-fit, place, tool.name, arguments))
    return [(name, arguments) for _, _, name, arguments in sorted(scored)[:MAX_CALLS]]
