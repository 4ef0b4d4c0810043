"""What an MCP tool's result becomes in a run: a document with a stable URL, a title and its text,
cited and claim-checked like any page; and which tools an agent sees when there are many."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from sleuth.core.words import FUNCTION_WORDS, QUESTION_WORDS, light_stem
from sleuth.stream.documents import Document
from sleuth.tools.base import Page, ToolError
from sleuth.tools.mcp.client import ToolOutput
from sleuth.tools.mcp.hub import McpTool

SNIPPET_CHARS = 300
_WORD = re.compile(r"[A-Za-z0-9]+")


def is_mcp_url(url: str) -> bool:
    return url.startswith("mcp://")


def call_url(server: str, tool: str, arguments: dict[str, Any]) -> str:
    """`mcp://<server>/<tool>?args=<hash>`: the same call gives the same URL, in any run."""
    canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"mcp://{server}/{tool}?args={hashlib.sha1(canonical.encode()).hexdigest()[:16]}"


def _title(tool: McpTool, arguments: dict[str, Any]) -> str:
    shown = [str(value) for value in arguments.values() if isinstance(value, str | int | float) and str(value).strip()]
    detail = ", ".join(shown)
    detail = detail if len(detail) <= 80 else detail[:79] + "…"
    return f"{tool.server} · {tool.tool}" + (f": {detail}" if detail else "")


def output_text(output: ToolOutput) -> str:
    """The result as one text: text blocks, embedded resources under their URI, links listed."""
    parts = [text.strip() for text in output.texts if text.strip()]
    for resource in output.resources:
        parts.append(
            f"{resource.uri}:\n{resource.text.strip()}" if parts or len(output.resources) > 1 else resource.text
        )
    if output.links:
        parts.append("Linked resources:\n" + "\n".join(f"- {name or uri}: {uri}" for uri, name in output.links))
    if output.skipped:
        parts.append(f"({output.skipped} non-text part(s) left out)")
    return "\n\n".join(parts)


def result_page(tool: McpTool, arguments: dict[str, Any], output: ToolOutput) -> Page:
    """The document a call's result becomes, its text cut to the server's `max_output_chars`.

    A result that is one embedded resource with a web URI, and nothing else, is that resource, under
    its own URI (checked as any cited web URL is); any other result is known by its `call_url`.
    Raises ToolError for a result the server marked as an error, or one with no text."""
    text = output_text(output)
    if output.is_error:
        raise ToolError(f"the tool reported an error: {text[:500] or '(no message)'}")
    if not text.strip():
        raise ToolError("the tool returned no text")
    if len(text) > tool.max_output_chars:
        text = text[: tool.max_output_chars].rstrip() + f"\n\n[cut at {tool.max_output_chars} characters]"
    only_resource = len(output.resources) == 1 and not output.texts and not output.links
    web = only_resource and output.resources[0].uri.startswith(("https://", "http://"))
    url = output.resources[0].uri if web else call_url(tool.server, tool.tool, arguments)
    snippet = " ".join(text.split())[:SNIPPET_CHARS]
    document = Document.from_url(url, title=_title(tool, arguments), snippet=snippet, source=f"mcp:{tool.server}")
    return Page(document=document, text=text)


def _terms(text: str) -> set[str]:
    words = (word.lower() for word in _WORD.findall(text.replace("_", " ")))
    return {light_stem(word) for word in words if word not in FUNCTION_WORDS and word not in QUESTION_WORDS}


def pick_tools(tools: Sequence[McpTool], task: str, limit: int) -> list[McpTool]:
    """At most `limit` tools for an agent with `task`: all of them when they fit, else those whose
    names and descriptions share the most words with the task (configuration order breaks ties)."""
    if len(tools) <= limit:
        return list(tools)
    wanted = _terms(task)
    scored = sorted(
        enumerate(tools),
        key=lambda item: (-len(wanted & _terms(f"{item[1].server} {item[1].tool} {item[1].description}")), item[0]),
    )
    return [tool for _, tool in scored[:limit]]
