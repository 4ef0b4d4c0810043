"""The owner of a process's MCP servers: each one is started (or reached) once, by one task that
also closes it, and shared by every run on the event loop.

A server that fails or hangs at start-up is marked unavailable with the reason and never holds up
anything beyond its `init_timeout_s`; a run asks `started()` and goes on with the servers that
answered. A server whose connection is lost mid-run is marked unavailable then.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import sys
import weakref
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TextIO

from sleuth.config import Settings
from sleuth.core import heavy
from sleuth.core.clock import Clock, SystemClock, clock_timeout
from sleuth.tools.base import ToolError
from sleuth.tools.mcp.client import Connection, ConnectionLost, ToolInfo, ToolOutput, connect
from sleuth.tools.mcp.config import McpConfigError, ServerConfig, load_config
from sleuth.tools.web.ssrf import AllowList, SsrfGuard

log = logging.getLogger(__name__)

State = Literal["starting", "ready", "unavailable", "disabled"]
# What providers accept as a function name (OpenAI: ^[a-zA-Z0-9_-]{1,64}$), and a description length
# every provider takes.
MAX_NAME = 64
MAX_DESCRIPTION = 1000
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass
class ServerStatus:
    config: ServerConfig
    state: State = "starting"
    reason: str = ""
    listed: int = 0  # tools the server lists, before include/exclude
    tools: list[ToolInfo] = field(default_factory=list)  # the ones offered to agents
    connection: Connection | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.config.name


@dataclass(frozen=True)
class ServerState:
    """One server as the process that runs it sees it, in plain values: what an engine tells the API
    server, which starts no MCP server of its own."""

    name: str
    state: State
    reason: str = ""
    tools: int = 0  # the tools offered to agents


def states_json(states: Sequence[ServerState]) -> str:
    return json.dumps([asdict(state) for state in states])


def states_from_json(text: str) -> tuple[ServerState, ...]:
    """What `states_json` wrote; entries of another shape (another version's) are left out."""
    found: list[ServerState] = []
    for entry in json.loads(text):
        try:
            found.append(ServerState(**entry))
        except TypeError:
            continue
    return tuple(found)


@dataclass(frozen=True)
class McpTool:
    """One MCP tool as agents see it: its unique exposed name and the function schema."""

    name: str  # `<server>__<tool>`, cut to what providers accept
    server: str
    tool: str
    description: str  # as agents read it: `[MCP server <server>] <summary>`, cut
    parameters: dict[str, Any]
    call_timeout_s: float
    max_output_chars: int
    summary: str = ""  # the server's own description (its name when it gives none), for people

    @property
    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def exposed_name(server: str, tool: str, taken: set[str]) -> str:
    """`<server>__<tool>` in the characters and length providers accept, unique among `taken`."""
    name = _UNSAFE.sub("_", f"{server}__{tool}")[:MAX_NAME]
    if name in taken:
        suffix = "_" + hashlib.sha1(f"{server}\x00{tool}".encode()).hexdigest()[:6]
        name = name[: MAX_NAME - len(suffix)] + suffix
        while name in taken:  # vanishingly rare: a hash collision as well
            name = name[:-1] + "x"
    return name


def _parameters(server: str, info: ToolInfo) -> dict[str, Any]:
    """A tool's input schema as a function's parameters: an object, with properties. A schema that
    is not valid JSON Schema becomes an open object (the arguments are checked against it)."""
    parameters = {key: value for key, value in info.input_schema.items() if key not in ("$schema", "title")}
    parameters["type"] = "object"
    parameters.setdefault("properties", {})
    try:
        heavy.Draft202012Validator.check_schema(parameters)
    except heavy.SchemaError as exc:
        log.warning("MCP server %s: tool %s has an invalid input schema (%s)", server, info.name, exc.message)
        return {"type": "object", "properties": {}}
    return parameters


def _summary(info: ToolInfo) -> str:
    return " ".join(info.description.split()) or info.name


def _describe(server: str, info: ToolInfo) -> str:
    text = f"[MCP server {server}] {info.description.strip() or info.name}"
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


class McpHub:
    """The MCP servers of this process (of this event loop), from `start()` to `close()`."""

    def __init__(
        self,
        servers: Sequence[ServerConfig],
        *,
        guard: SsrfGuard | None = None,
        errlog: TextIO | None = None,
        problem: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.statuses = [ServerStatus(config=server) for server in servers]
        self.problem = problem  # the file could not be used at all
        self._guard = guard or SsrfGuard()
        self._clock = clock or SystemClock()  # what `init_timeout_s` and `call_timeout_s` are measured on
        self._errlog = errlog or sys.stderr
        self._owned_log: TextIO | None = None  # a log file this hub opened, closed with it
        self._closing = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None
        self._started = asyncio.Event()
        self._tools: list[McpTool] | None = None
        self._watchers: list[Callable[[tuple[ServerState, ...]], None]] = []

    @classmethod
    def from_settings(cls, settings: Settings, clock: Clock | None = None) -> McpHub:
        """The servers `settings` configure; a file that cannot be used leaves none, and says why.
        Stdio servers' stderr goes to `<data dir>/logs/mcp-servers.log`."""
        guard = SsrfGuard(AllowList.parse(settings.mcp_allow_hosts))
        try:
            config = load_config(settings)
        except McpConfigError as exc:
            return cls([], guard=guard, problem=str(exc), clock=clock)
        if not any(server.transport == "stdio" and server.problem is None for server in config.servers):
            return cls(config.servers, guard=guard, clock=clock)
        log_file = _server_log(settings)
        hub = cls(config.servers, guard=guard, errlog=log_file, clock=clock)
        hub._owned_log = log_file if log_file is not sys.stderr else None
        return hub

    @property
    def configured(self) -> bool:
        return bool(self.statuses) or self.problem is not None

    def start(self) -> None:
        """Start the owner task on the running loop (once)."""
        if self._owner is None:
            self._owner = asyncio.get_running_loop().create_task(self._own(), name="sleuth-mcp-owner")

    async def started(self) -> None:
        """Until every server is ready or unavailable (each is bounded by its `init_timeout_s`)."""
        self.start()
        await self._started.wait()

    async def close(self) -> None:
        """Close every server, in the task that opened it."""
        self._closing.set()
        if self._owner is not None:
            await asyncio.gather(self._owner, return_exceptions=True)
        if self._owned_log is not None:
            self._owned_log.close()
            self._owned_log = None

    def states(self) -> tuple[ServerState, ...]:
        return tuple(
            ServerState(name=s.name, state=s.state, reason=s.reason, tools=len(s.tools) if s.state == "ready" else 0)
            for s in self.statuses
        )

    def watch(self, callback: Callable[[tuple[ServerState, ...]], None]) -> None:
        """Call `callback` with the states once every server has started or failed, and whenever a
        server is lost after that (at once when they have already started)."""
        self._watchers.append(callback)
        if self._started.is_set():
            callback(self.states())

    def _changed(self) -> None:
        states = self.states()
        for callback in self._watchers:
            callback(states)

    def unavailable(self) -> list[ServerStatus]:
        return [status for status in self.statuses if status.state == "unavailable"]

    def tools(self) -> list[McpTool]:
        """Every tool of the ready servers, with unique exposed names (in configuration order)."""
        ready = {status.name for status in self.statuses if status.state == "ready"}
        return [tool for tool in self.tools_listed() if tool.server in ready]

    def tools_listed(self) -> list[McpTool]:
        """Every tool the servers offered when they started, whatever their state now."""
        if self._tools is None or not self._started.is_set():
            taken: set[str] = set()
            tools: list[McpTool] = []
            for status in self.statuses:
                for info in status.tools:
                    name = exposed_name(status.name, info.name, taken)
                    taken.add(name)
                    tools.append(
                        McpTool(
                            name=name,
                            server=status.name,
                            tool=info.name,
                            description=_describe(status.name, info),
                            summary=_summary(info),
                            parameters=_parameters(status.name, info),
                            call_timeout_s=status.config.call_timeout_s,
                            max_output_chars=status.config.max_output_chars,
                        )
                    )
            self._tools = tools
        return self._tools

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], timeout_s: float | None = None
    ) -> ToolOutput:
        """Call one tool. Raises ToolError for an unknown or unavailable server, a timeout, a failure."""
        await self.started()
        status = next((s for s in self.statuses if s.name == server), None)
        if status is None:
            raise ToolError(f"no MCP server is named {server!r}")
        if self._closing.is_set():
            raise ToolError("the MCP servers are closed")
        if status.state != "ready" or status.connection is None:
            raise ToolError(f"MCP server {server} is {status.state}" + (f": {status.reason}" if status.reason else ""))
        timeout_s = timeout_s or status.config.call_timeout_s
        try:
            async with clock_timeout(self._clock, timeout_s):
                return await status.connection.call(tool, arguments)
        except TimeoutError:
            raise ToolError(f"no answer within {timeout_s:g} s") from None
        except ConnectionLost as exc:
            self._lost(status, str(exc))
            raise

    def _lost(self, status: ServerStatus, reason: str) -> None:
        if status.state == "ready":
            log.warning("MCP server %s: %s", status.name, reason)
            status.state = "unavailable"
            status.reason = reason
            self._changed()

    async def _own(self) -> None:
        try:
            if any(status.config.enabled and status.config.problem is None for status in self.statuses):
                # The SDK loads a web stack of its own: imported on the preload thread, never on this loop.
                await heavy.ready("mcp", "mcp_types")
            holders = [
                asyncio.create_task(self._hold(status), name=f"sleuth-mcp-{status.name}") for status in self.statuses
            ]
            await asyncio.gather(*holders, return_exceptions=True)
        finally:
            # Whatever ended the owner (no servers, a bug, the loop's teardown), nobody waits on it.
            for status in self.statuses:
                if status.state == "starting":
                    status.state, status.reason = "unavailable", "the MCP client stopped before it started"
            self._set_started()

    async def _hold(self, status: ServerStatus) -> None:
        config = status.config
        if config.problem is not None:
            self._settle(status, "unavailable" if config.enabled else "disabled", config.problem)
            return
        if not config.enabled:
            self._settle(status, "disabled", "enabled is false")
            return
        async with AsyncExitStack() as stack:
            try:
                async with clock_timeout(self._clock, config.init_timeout_s):
                    connection = await stack.enter_async_context(connect(config, self._errlog, self._guard))
                    listed = await connection.list_tools()
            except TimeoutError:
                self._settle(status, "unavailable", f"did not start within {config.init_timeout_s:g} s")
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._settle(status, "unavailable", f"could not start: {_reason(exc)}")
                return
            status.listed = len(listed)
            status.tools = [info for info in listed if config.offers(info.name)]
            status.connection = connection
            self._settle(status, "ready", "")
            await self._closing.wait()
            status.connection = None

    def _settle(self, status: ServerStatus, state: State, reason: str) -> None:
        status.state = state
        status.reason = reason
        if state == "unavailable":
            log.warning("MCP server %s is unavailable: %s", status.name, reason)
        if all(s.state != "starting" for s in self.statuses):
            self._set_started()

    def _set_started(self) -> None:
        if not self._started.is_set():
            self._started.set()
            self._changed()


def _reason(exc: BaseException) -> str:
    """The first real error inside the SDK's task groups, in one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) if isinstance(exc, ToolError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:300]


# One hub per event loop: an engine process's loop serves every run, so its servers start once.
_HUBS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, McpHub] = weakref.WeakKeyDictionary()


def loop_hub(settings: Settings) -> McpHub | None:
    """The running loop's hub, made and started on first use; None when no servers are configured
    (or outside a running loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    hub = _HUBS.get(loop)
    if hub is None:
        hub = McpHub.from_settings(settings)
        _HUBS[loop] = hub
    if not hub.configured:
        return None
    hub.start()
    return hub


def install_hub(hub: McpHub) -> None:
    """Make `hub` the running loop's hub (a test's in-process servers, a command's own hub)."""
    _HUBS[asyncio.get_running_loop()] = hub


async def close_loop_hub() -> None:
    """Close the running loop's hub, if it has one: an engine process's shutdown."""
    hub = _HUBS.pop(asyncio.get_running_loop(), None)
    if hub is not None:
        await hub.close()


def _server_log(settings: Settings) -> TextIO:
    """Where stdio servers' stderr goes: a file under the data dir, not the terminal or the server's log."""
    folder = settings.data_dir.expanduser() / "logs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return open(os.path.join(folder, "mcp-servers.log"), "a", encoding="utf-8")  # noqa: SIM115 - closed with the hub
    except OSError:
        return sys.stderr
