"""The MCP servers file: the `{"mcpServers": {...}}` shape other MCP clients use, read once.

A stdio server has `command` (with `args`, `env`, `cwd`); a streamable HTTP server has `url` (with
`headers`). `${VAR}` in any string is replaced from the environment, so secrets stay out of the file.
Sleuth's own keys per server: `include` / `exclude` (tool names), `init_timeout_s`, `call_timeout_s`,
`max_output_chars`, `enabled`. A file that cannot be read at all is a `McpConfigError` (one line for
the user); one server's mistake makes only that server unavailable, with the reason.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sleuth.config import Settings

DEFAULT_INIT_TIMEOUT_S = 30.0
DEFAULT_CALL_TIMEOUT_S = 120.0
DEFAULT_MAX_OUTPUT_CHARS = 20_000
# A server's name is the prefix of its tools' names (`<server>__<tool>`): the characters providers accept.
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KEYS = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "include",
        "exclude",
        "init_timeout_s",
        "call_timeout_s",
        "max_output_chars",
        "enabled",
    }
)
# Keys other MCP clients write in the same file: accepted and left alone (`disabled` is honoured), so
# a file from another client works; any other key is a typo worth saying.
_FOREIGN_KEYS = frozenset({"type", "transport", "disabled", "autoApprove", "alwaysAllow", "timeout", "description"})


class McpConfigError(ValueError):
    """The servers file cannot be used at all: one line that says why."""


@dataclass(frozen=True)
class ServerConfig:
    """One server as configured. `in_process` (an SDK server object) exists only in code, for tests:
    the file can name only a command or a URL."""

    name: str
    transport: Literal["stdio", "http", "memory"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    include: frozenset[str] | None = None
    exclude: frozenset[str] = frozenset()
    init_timeout_s: float = DEFAULT_INIT_TIMEOUT_S
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS
    enabled: bool = True
    in_process: object | None = None
    problem: str | None = None  # why this entry cannot be used (a missing variable, a wrong type)

    def offers(self, tool: str) -> bool:
        """Whether `include`/`exclude` let the agents see `tool`."""
        return (self.include is None or tool in self.include) and tool not in self.exclude


@dataclass(frozen=True)
class McpConfig:
    path: Path | None  # the file read; None when there is none
    servers: tuple[ServerConfig, ...] = ()


def config_path(settings: Settings) -> Path | None:
    """`SLEUTH_MCP_CONFIG`, else `<data dir>/mcp.json` when it exists; None: no MCP servers."""
    if settings.mcp_config is not None:
        return settings.mcp_config.expanduser()
    default = settings.data_dir.expanduser() / "mcp.json"
    return default if default.is_file() else None


def load_config(settings: Settings, environ: Mapping[str, str] | None = None) -> McpConfig:
    """The servers `settings` configure. Raises McpConfigError for a file that cannot be read or parsed."""
    path = config_path(settings)
    if path is None:
        return McpConfig(path=None)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise McpConfigError(f"MCP servers file {path}: cannot be read ({exc.strerror or exc})") from None
    return parse_config(text, path, os.environ if environ is None else environ)


def parse_config(text: str, path: Path | None, environ: Mapping[str, str]) -> McpConfig:
    where = f"MCP servers file {path}" if path else "MCP servers file"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(f"{where}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise McpConfigError(f'{where}: expected an object with "mcpServers": {{"<name>": {{...}}}}')
    servers = tuple(_server(str(name), entry, environ) for name, entry in data["mcpServers"].items())
    return McpConfig(path=path, servers=servers)


class _Bad(Exception):
    pass


def _expand(value: str, environ: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise _Bad(f"environment variable {name} is not set")
        return environ[name]

    return _VAR.sub(one, value)


def _string(entry: Mapping[str, Any], key: str, environ: Mapping[str, str]) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str):
        raise _Bad(f'"{key}" must be a string')
    return _expand(value, environ)


def _strings(entry: Mapping[str, Any], key: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Bad(f'"{key}" must be a list of strings')
    return tuple(_expand(item, environ) for item in value)


def _mapping(entry: Mapping[str, Any], key: str, environ: Mapping[str, str]) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Bad(f'"{key}" must be an object of strings')
    return {str(k): _expand(v, environ) for k, v in value.items()}


def _number(entry: Mapping[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise _Bad(f'"{key}" must be a positive number')
    return float(value)


def _server(name: str, entry: object, environ: Mapping[str, str]) -> ServerConfig:
    if not _NAME.match(name) or "__" in name:
        return ServerConfig(
            name=re.sub(r"[^A-Za-z0-9_-]", "_", name)[:32] or "server",
            transport="stdio",
            problem=f"the name {name!r} is not 1-32 letters, digits, '_' or '-' (and has no '__')",
        )
    if not isinstance(entry, dict):
        return ServerConfig(name=name, transport="stdio", problem="its entry must be an object")
    try:
        unknown = sorted(set(entry) - _KEYS - _FOREIGN_KEYS)
        if unknown:
            raise _Bad(f"unknown key(s): {', '.join(unknown)}")
        if str(entry.get("type") or entry.get("transport") or "").lower() == "sse":
            raise _Bad("the SSE transport is not supported; use the server's streamable HTTP URL")
        enabled = entry.get("enabled", not entry.get("disabled", False))
        if not isinstance(enabled, bool):
            raise _Bad('"enabled" must be true or false')
        include = frozenset(_strings(entry, "include", environ)) if "include" in entry else None
        common: dict[str, Any] = {
            "include": include,
            "exclude": frozenset(_strings(entry, "exclude", environ)),
            "init_timeout_s": _number(entry, "init_timeout_s", DEFAULT_INIT_TIMEOUT_S),
            "call_timeout_s": _number(entry, "call_timeout_s", DEFAULT_CALL_TIMEOUT_S),
            "max_output_chars": int(_number(entry, "max_output_chars", DEFAULT_MAX_OUTPUT_CHARS)),
            "enabled": enabled,
        }
        if "command" in entry and "url" in entry:
            raise _Bad('give "command" (stdio) or "url" (streamable HTTP), not both')
        if "command" in entry:
            command = _string(entry, "command", environ)
            if not command.strip():
                raise _Bad('"command" is empty')
            cwd = _string(entry, "cwd", environ) or None
            return ServerConfig(
                name=name,
                transport="stdio",
                command=command,
                args=_strings(entry, "args", environ),
                env=_mapping(entry, "env", environ),
                cwd=cwd,
                **common,
            )
        if "url" in entry:
            url = _string(entry, "url", environ)
            if not url.startswith(("http://", "https://")):
                raise _Bad('"url" must be an http:// or https:// URL')
            return ServerConfig(
                name=name, transport="http", url=url, headers=_mapping(entry, "headers", environ), **common
            )
        raise _Bad('needs "command" (stdio) or "url" (streamable HTTP)')
    except _Bad as exc:
        return ServerConfig(
            name=name, transport="stdio", enabled=entry.get("enabled", True) is not False, problem=str(exc)
        )
