"""A scripted OpenAI-compatible chat server on 127.0.0.1: the one fake model of the tests and the
benchmarks, for driving Sleuth through litellm.

A test or a benchmark gives it a `respond(request_body) -> Reply` function. The server streams the
reply the way OpenAI does: text in small deltas, tool calls with their arguments split across
chunks, then a usage chunk and `[DONE]`. A reply can also be an HTTP error, a hang, slow, or held
until a test lets it go (whole, or only its usage chunk). With `latency_s`, every call lasts exactly
that long from the request's arrival to its last byte, as a hosted model's would (`step_latency_s`
sets it apart for some steps): the headers and first chunk come after half of it, the other chunks
evenly over the second half. Every call's in-flight interval is recorded (`calls`), so a benchmark can tell model time
from engine time.

Its own HTTP server (asyncio streams, no web framework) on a thread of the process that starts it:
benchmarks measure what runs beside it, so it must cost little CPU and keep its pace.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any, Protocol

log = logging.getLogger(__name__)


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
    # send the text and finish reason, and the usage chunk and the stream's end only once it is set
    usage_gate: threading.Event | None = None
    chunk_size: int = 7  # characters per delta; 4 is about one token, as a hosted model streams
    usage: tuple[int, int] | None = (
        None  # (prompt, completion) tokens; unset: 100 and about a quarter of the characters
    )


@dataclass
class CallRecord:
    step: str  # what `classify` says sent it
    arrived: float  # time.perf_counter() when the request body was read
    finished: float = 0.0  # when its last byte was written; 0 while in flight, and for a hang


Responder = Callable[[dict[str, Any]], Reply]


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


# -- the reply as HTTP -------------------------------------------------------------------------

STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
    b"connection: keep-alive\r\n\r\n"
)
STREAM_END = b"0\r\n\r\n"


def _http_chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(payload: dict[str, Any] | str) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return _http_chunk(f"data: {text}\n\n".encode())


def _delta(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return _event(
        {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def stream_chunks(reply: Reply) -> tuple[list[bytes], bool]:
    """The reply as HTTP chunks of OpenAI stream events, and whether it stalls after them (a hang)."""
    out = [_delta({"role": "assistant", "content": ""})]
    if reply.reasoning:
        out += [_delta({"reasoning_content": piece}) for piece in _pieces(reply.reasoning, reply.chunk_size)]
    if reply.text:
        out += [_delta({"content": piece}) for piece in _pieces(reply.text, reply.chunk_size)]
    if reply.hang:  # after any text: a model that stalls mid-answer
        return out, True
    for index, call in enumerate(reply.tool_calls):
        arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        head = {"index": index, "id": f"call_{index}_{id(call)}", "type": "function"}
        out.append(_delta({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]}))
        out += [
            _delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _pieces(arguments, reply.chunk_size)
        ]
    out.append(_delta({}, finish="tool_calls" if reply.tool_calls else "stop"))
    prompt, completion = reply.usage or (100, max(1, (len(reply.text) + len(str(reply.tool_calls))) // 4))
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    final = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": "scripted"}
    out.append(_event({**final, "choices": [], "usage": usage}))
    out.append(_event("[DONE]"))
    return out, False


def error_response(reply: Reply) -> bytes:
    body = json.dumps({"error": {"message": reply.error_message, "type": "scripted", "code": reply.status}}).encode()
    head = f"HTTP/1.1 {reply.status} {HTTPStatus(reply.status).phrase}\r\ncontent-type: application/json\r\n"
    return f"{head}content-length: {len(body)}\r\n\r\n".encode() + body


NOT_FOUND = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"


# -- the server --------------------------------------------------------------------------------


class ScriptedLLM:
    """Run with `with ScriptedLLM(respond) as llm:` (served on a thread of its own), or with `async
    with` (served on the running event loop, as a `VirtualClock` needs); point litellm at
    `llm.base_url`."""

    def __init__(
        self,
        respond: Responder,
        *,
        latency_s: float = 0.0,
        step_latency_s: dict[str, float] | None = None,
        pauses: Pausable | None = None,
    ) -> None:
        self.respond = respond
        self.latency_s = latency_s
        self.step_latency_s = dict(step_latency_s or {})  # by `classify`'s name for the step
        self._pauses = pauses  # paused while a reply is served: answering takes no scaled time
        self.requests: list[dict[str, Any]] = []
        self.calls: list[CallRecord] = []
        self._lock = threading.Lock()
        self._release = threading.Event()  # set on exit: hangs and gates end
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._released: asyncio.Event | None = None  # `_release`, on the server's loop, for hangs to await
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self._answering: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def requests_for(self, step: str) -> list[dict[str, Any]]:
        with self._lock:
            return [body for body in self.requests if classify(body) == step]

    # -- one connection, several requests one after the other (keep-alive) --------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                method, path = (request_line.split() + ["", ""])[:2]
                if method != "POST" or not path.endswith("/chat/completions"):
                    writer.write(NOT_FOUND)
                    await writer.drain()
                    continue
                self._answering.add(task)
                try:
                    open_after = await self._answer(json.loads(body), writer)
                finally:
                    self._answering.discard(task)
                if not open_after:
                    return
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass  # the client went away
        finally:
            self._connections.pop(task, None)
            writer.close()

    async def _answer(self, body: dict[str, Any], writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection is done with (a hang was released)."""
        record = CallRecord(step=classify(body), arrived=time.perf_counter())
        with self._lock:
            self.requests.append(body)
            self.calls.append(record)
        try:
            reply = self.respond(body)
        except Exception:  # a bug in a test's script: the run sees a server error, the log says why
            log.exception("the scripted responder raised")
            reply = Reply(status=500, error_message="the scripted responder raised")
        if reply.gate is not None or reply.delay_s:
            self._pause()
            try:
                if reply.gate is not None:
                    await self._until_set(reply.gate)
                await asyncio.sleep(reply.delay_s)
            finally:
                self._resume()
        if reply.status != 200:
            writer.write(error_response(reply))
            await writer.drain()
            record.finished = time.perf_counter()
            return True
        chunks, hangs = stream_chunks(reply)
        paused = self._pauses is not None
        if self._pauses is not None:
            self._pauses.pause()  # resumed when the stream ends or hangs
        try:
            latency = 0.0 if hangs else self.step_latency_s.get(record.step, self.latency_s)
            held = 2 if reply.usage_gate is not None and not hangs else 0  # the usage chunk and `[DONE]`
            await self._send(writer, chunks[: len(chunks) - held], record.arrived, latency)
            if reply.usage_gate is not None and held:
                await self._until_set(reply.usage_gate)
                writer.write(b"".join(chunks[-held:]))
            if hangs:
                if paused:
                    paused = False
                    self._resume()  # a hang takes time like a real one
                await self._stopped()
                writer.write(STREAM_END)  # the stream ends without a finish reason
                return False
            writer.write(STREAM_END)
            await writer.drain()
            record.finished = time.perf_counter()
            return True
        finally:
            if paused:
                self._resume()

    async def _send(self, writer: asyncio.StreamWriter, chunks: list[bytes], arrived: float, latency: float) -> None:
        """The head and `chunks`: at once, or paced over `latency` from `arrived` (half of it before
        the first chunk, the rest spread evenly, the last chunk when it ends)."""
        if latency <= 0:
            writer.write(STREAM_HEAD + b"".join(chunks))
            await writer.drain()
            return
        first = arrived + latency / 2
        spacing = (latency / 2) / max(1, len(chunks) - 1)
        await asyncio.sleep(max(0.0, first - time.perf_counter()))
        writer.write(STREAM_HEAD)
        sent = 0
        while sent < len(chunks):
            due = min(len(chunks), int((time.perf_counter() - first) / spacing) + 1)
            if due > sent:
                writer.write(b"".join(chunks[sent:due]))
                sent = due
                await writer.drain()
            if sent < len(chunks):
                await asyncio.sleep(max(0.0005, first + sent * spacing - time.perf_counter()))

    def _pause(self) -> None:
        if self._pauses is not None:
            self._pauses.pause()

    def _resume(self) -> None:
        if self._pauses is not None:
            self._pauses.resume()

    async def _stopped(self) -> None:
        """Until the server stops: a hang waits here without waking (a client that gives up
        cancels it), however long a test keeps it."""
        if not self._release.is_set() and self._released is not None:
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

    # -- lifetime -------------------------------------------------------------------------------

    async def _serve(self, sock: socket.socket, ready: threading.Event) -> None:
        self._stop = asyncio.Event()
        self._released = asyncio.Event()
        server = await asyncio.start_server(self._connection, sock=sock)  # asyncio sets TCP_NODELAY
        ready.set()
        await self._stop.wait()
        server.close()
        if self._answering:  # released hangs and gates end their answers first, as a real server's would
            await asyncio.wait(list(self._answering), timeout=1)
        for writer in list(self._connections.values()):
            writer.close()  # the idle keep-alive connections: their read ends (cancelling them logs noise in 3.11)
        if self._connections:
            await asyncio.wait(list(self._connections), timeout=1)
        await server.wait_closed()

    def _bind(self) -> socket.socket:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        return sock

    def __enter__(self) -> ScriptedLLM:
        sock = self._bind()
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            try:
                self._loop.run_until_complete(self._serve(sock, ready))
            finally:
                self._loop.close()

        self._thread = threading.Thread(target=run, name="scripted-llm", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the scripted model server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop_holding()
        assert self._loop is not None and self._stop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=5)

    async def __aenter__(self) -> ScriptedLLM:
        sock = self._bind()
        ready = threading.Event()
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._serve(sock, ready), name="scripted-llm")
        while not ready.is_set():
            if self._task.done():
                self._task.result()  # the server could not start: its error
            await asyncio.sleep(0)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop_holding()
        assert self._stop is not None and self._task is not None
        self._stop.set()
        await self._task
