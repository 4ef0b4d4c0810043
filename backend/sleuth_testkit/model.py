"""A scripted OpenAI-compatible chat server on 127.0.0.1 for driving Sleuth through litellm.

A test or a benchmark gives it a `respond(request_body) -> Reply` function. The server streams the reply the
way OpenAI does: text in small deltas, tool calls with their arguments split across chunks,
then a usage chunk and `[DONE]`. A reply can also be an HTTP error, a hang, slow, or held until a test lets it go.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route


class Pausable(Protocol):
    """A test clock the model stops while it answers (`ScaledClock`, `VirtualClock`)."""

    def pause(self) -> None: ...
    def resume(self) -> None: ...


@dataclass
class Call:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim (for malformed JSON)


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[Call] = field(default_factory=list)
    reasoning: str = ""
    status: int = 200
    error_message: str = "scripted failure"
    hang: bool = False
    delay_s: float = 0.0  # before the first byte
    gate: threading.Event | None = None  # answer only once it is set: a test holds the run mid-flight
    chunk_size: int = 7
    usage: tuple[int, int] | None = None


Responder = Callable[[dict[str, Any]], Reply]
HANGING = "<hang>"  # from `_chunks`: the reply stalls here


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools") or []}


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(m.get("content") or "" for m in body["messages"] if m["role"] == "system")


def classify(body: dict[str, Any]) -> str:
    """Which Sleuth step sent this request: clarifier, planner, orchestrator, agent, agent_report, report,
    artifact, followup, audio_script."""
    names = tool_names(body)
    if "record_artifact" in names:
        return "artifact"
    if "decline_followup" in names:
        return "followup"
    if names & {"record_overview", "record_dialogue"}:
        return "audio_script"
    if names == {"generate_plan"}:
        return "clarifier"
    if "research_agent" in names:
        return "orchestrator"
    if "open_url" in names:
        return "agent"
    system = system_text(body).lower()
    if (
        "research plan" in system
        and "numbered" in system
        and "intermediate report" not in system
        and "final report" not in system
    ):
        return "planner"
    if "intermediate report" in system:
        return "agent_report"
    return "report"


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(m.get("content") or "" for m in body["messages"] if m["role"] == "user")


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m.get("content") or "" for m in body["messages"] if m["role"] == "tool"]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    payload = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(payload)}\n\n"


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class ScriptedLLM:
    """Run with `with ScriptedLLM(respond) as llm:` (served on a thread of its own), or with `async
    with` (served on the running event loop, as a `VirtualClock` needs); point litellm at
    `llm.base_url`."""

    def __init__(self, respond: Responder, *, pauses: Pausable | None = None) -> None:
        self.respond = respond
        self._pauses = pauses  # paused while a reply is served: answering takes no scaled time
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._release = threading.Event()  # set when the server stops: every held reply ends
        self._released: asyncio.Event | None = None  # the same, on the server's loop, for hangs to await
        self._loop: asyncio.AbstractEventLoop | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def requests_for(self, step: str) -> list[dict[str, Any]]:
        with self._lock:
            return [body for body in self.requests if classify(body) == step]

    async def _chat(self, request: Request) -> Any:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
        reply = self.respond(body)
        if reply.gate is not None or reply.delay_s:
            self._pause()
            try:
                if reply.gate is not None:
                    await self._until_set(reply.gate)
                await asyncio.sleep(reply.delay_s)
            finally:
                self._resume()
        if reply.status != 200:
            return JSONResponse(
                {"error": {"message": reply.error_message, "type": "scripted", "code": reply.status}},
                status_code=reply.status,
            )
        return StreamingResponse(self._stream(reply), media_type="text/event-stream")

    def _pause(self) -> None:
        if self._pauses is not None:
            self._pauses.pause()

    def _resume(self) -> None:
        if self._pauses is not None:
            self._pauses.resume()

    async def _stopped(self) -> None:
        """Until the server stops: a hang waits here without waking (a client that gives up
        cancels it), however long a test keeps it."""
        if self._released is None:
            self._loop = asyncio.get_running_loop()
            self._released = asyncio.Event()
        if not self._release.is_set():
            await self._released.wait()

    def _stop_holding(self) -> None:
        self._release.set()
        loop, released = self._loop, self._released
        if loop is not None and released is not None and not loop.is_closed():
            loop.call_soon_threadsafe(released.set)

    async def _until_set(self, event: threading.Event) -> None:
        """Wait for an event set from another thread (the test's), or for the server to stop."""
        while not (event.is_set() or self._release.is_set()):
            await asyncio.sleep(0.02)  # a threading.Event cannot be awaited; the loop keeps serving meanwhile

    async def _stream(self, reply: Reply) -> AsyncIterator[str]:
        paused = self._pauses is not None
        if self._pauses is not None:
            self._pauses.pause()  # resumed when the stream ends or hangs
        try:
            async for chunk in self._chunks(reply):
                if chunk is HANGING:
                    if paused:
                        paused = False
                        self._resume()  # a hang takes time like a real one
                    await self._stopped()
                    return
                yield chunk
        finally:
            if paused:
                self._resume()

    async def _chunks(self, reply: Reply) -> AsyncIterator[str]:
        yield _chunk({"role": "assistant", "content": ""})
        for piece in _pieces(reply.reasoning, reply.chunk_size) if reply.reasoning else []:
            yield _chunk({"reasoning_content": piece})
        for piece in _pieces(reply.text, reply.chunk_size) if reply.text else []:
            yield _chunk({"content": piece})
        if reply.hang:  # after any text: a model that stalls mid-answer
            yield HANGING
            return
        for index, call in enumerate(reply.tool_calls):
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            yield _chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": f"call_{index}_{id(call)}",
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _pieces(arguments, reply.chunk_size):
                yield _chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield _chunk({}, finish="tool_calls" if reply.tool_calls else "stop")
        prompt, completion = reply.usage or (100, max(1, (len(reply.text) + len(str(reply.tool_calls))) // 4))
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        final = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": "scripted"}
        yield f"data: {json.dumps({**final, 'choices': [], 'usage': usage})}\n\n"
        yield "data: [DONE]\n\n"

    def _bind(self) -> socket.socket:
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        sock = socket.socket()
        # Streamed chunks are small writes; without this, Nagle's algorithm and delayed ACKs hold them back.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        return sock

    def __enter__(self) -> ScriptedLLM:
        sock = self._bind()
        assert self._server is not None
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        while not self._server.started:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop_holding()
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(timeout=5)

    async def __aenter__(self) -> ScriptedLLM:
        sock = self._bind()
        assert self._server is not None
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]), name="scripted-llm")
        while not self._server.started:
            if self._task.done():
                self._task.result()  # uvicorn could not start: its error
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop_holding()
        assert self._server is not None and self._task is not None
        self._server.should_exit = True
        await self._task
