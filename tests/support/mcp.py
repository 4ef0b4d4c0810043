"""MCP fixtures for tests: hubs over the test kit's fixture server (in memory, as a stdio subprocess,
over streamable HTTP), a servers file, and a scripted model whose agents call MCP tools."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sleuth.tools.mcp.config import ServerConfig
from sleuth_testkit.mcp_server import fixture_server
from sleuth_testkit.model import Call, Reply, tool_names, user_text
from sleuth_testkit.scenarios import ResearchModel, assistant_turns, sources_in

BACKEND = str(Path(__file__).resolve().parents[2] / "backend")


def memory_server(name: str = "fixture", *, hang: bool = False, **options: Any) -> ServerConfig:
    return ServerConfig(name=name, transport="memory", in_process=fixture_server(name, hang=hang), **options)


def stdio_entry(*flags: str, **options: Any) -> dict[str, Any]:
    """A servers-file entry that starts the fixture server as a subprocess of this Python."""
    return {
        "command": sys.executable,
        "args": ["-m", "sleuth_testkit.mcp_server", *flags],
        "env": {"PYTHONPATH": os.pathsep.join([BACKEND, os.environ.get("PYTHONPATH", "")])},
        **options,
    }


def stdio_server(name: str = "fixture", *flags: str, **options: Any) -> ServerConfig:
    entry = stdio_entry(*flags)
    return ServerConfig(
        name=name, transport="stdio", command=entry["command"], args=tuple(entry["args"]), env=entry["env"], **options
    )


def write_servers(path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@dataclass
class McpModel(ResearchModel):
    """One agent, one cycle: its first turn calls `calls` (those it was given), then it reports."""

    calls: list[tuple[str, dict[str, Any]]] = field(
        default_factory=lambda: [("fixture__lookup_notes", {"topic": "descriptors"})]
    )

    def __post_init__(self) -> None:
        self.tasks_per_cycle = [["descriptor notes lookup"]]
        self.use_think = False

    def agent(self, body: dict[str, Any]) -> Reply:
        if assistant_turns(body) == 0:
            offered = tool_names(body)
            calls = [Call(name, arguments) for name, arguments in self.calls if name in offered]
            if calls:
                return Reply(tool_calls=calls)
        return Reply(tool_calls=[Call("generate_report", {})])

    def report(self, body: dict[str, Any]) -> Reply:
        """Sentences the fixture's notes support, each citing the notes' number."""
        listed = sources_in(user_text(body).replace(" — ", "\nURL: "))
        numbers = [n for n, _, url in listed if url.startswith("mcp://")] or [n for n, _, _ in listed]
        cite = f"[{numbers[0]}]" if numbers else ""
        sentence = "Data descriptors define __get__ and __set__ and take precedence over the instance dictionary"
        return Reply(text=f"{sentence} {cite}.\n")
