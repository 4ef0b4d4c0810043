"""A fixed-latency fake OpenAI-compatible chat endpoint that plays a sensible research model (bench only).

Its own server (asyncio streams, no web framework): it runs in a thread of the benchmark process
and must cost little CPU of its own. Which step sent a request is told the way the tests' scripted
model tells it (`sleuth_testkit.model.classify`).

Every call lasts exactly `latency` seconds from the request's arrival to its last byte: the
headers and first token come after half of it, the other tokens evenly over the second half, one
token (about four characters) per chunk, as a hosted model streams. Each call's in-flight interval
is recorded, so the benchmark can tell model time from engine time.

The scripted run, for a heavy-mode `sleuth research` with clarification on: clarifier -> plan ->
orchestrator dispatches 3 agents -> each agent searches, then searches again, opens a page and
asks to report in one turn, then writes its intermediate report -> orchestrator thinks ->
orchestrator asks for the report -> final report -> report artifact. 16 model calls, 6 searches,
3 parallel lanes.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sleuth_testkit.model import classify, tool_names, user_text

TOKEN_CHARS = 4
_SOURCE = re.compile(r"^\[(\d+)\] (.*)\nURL: (\S+)", re.M)
_SOURCE_LINE = re.compile(r"^\[(\d+)\] .* — (\S+)$", re.M)


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass
class Answer:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass
class CallRecord:
    step: str
    arrived: float  # time.perf_counter() when the request body was read
    finished: float = 0.0  # when its last byte was written


def _assistant_calls(body: dict[str, Any]) -> list[list[str]]:
    return [
        [c["function"]["name"] for c in m.get("tool_calls") or []] for m in body["messages"] if m["role"] == "assistant"
    ]


def _last_tool_texts(body: dict[str, Any]) -> str:
    out: list[str] = []
    for message in reversed(body["messages"]):
        if message["role"] == "assistant":
            break
        if message["role"] == "tool":
            out.append(str(message.get("content") or ""))
    return "\n".join(out)


TASKS = [
    "How the descriptor protocol (__get__, __set__) decides attribute lookup",
    "When __getattr__ is called as a fallback, and how __getattribute__ differs",
    "How property, classmethod and __slots__ are built on descriptors",
]


def _sentences(topic: str, numbers: list[int], count: int) -> str:
    cites = numbers or [1]
    return " ".join(
        f"Point {i} on {topic}: the language reference describes this behaviour in detail, "
        f"including the order in which the interpreter consults each mechanism [{cites[i % len(cites)]}]."
        for i in range(count)
    )


def answer(body: dict[str, Any]) -> Answer:
    """The scripted research model's answer to one request."""
    step = classify(body)
    if step == "clarifier":
        return Answer(tool_calls=[ToolCall("generate_plan", {})])
    if step == "planner":
        return Answer(text="\n".join(f"{i}. {task}" for i, task in enumerate(TASKS, 1)))
    if step == "orchestrator":
        turns = _assistant_calls(body)
        if not any("research_agent" in names for names in turns):
            return Answer(
                tool_calls=[ToolCall("research_agent", {"task": t, "plan_step": i}) for i, t in enumerate(TASKS, 1)]
            )
        if "think_tool" in tool_names(body) and (not turns or turns[-1] != ["think_tool"]):
            reasoning = "All three plan steps are covered by the findings, with sources for each. Next: the report."
            return Answer(tool_calls=[ToolCall("think_tool", {"reasoning": reasoning})])
        return Answer(tool_calls=[ToolCall("generate_report", {})])
    if step == "agent":
        task = next(str(m["content"]) for m in body["messages"] if m["role"] == "user")
        if not _assistant_calls(body):
            return Answer(tool_calls=[ToolCall("search", {"queries": [task]})])
        urls = [url for _, _, url in _SOURCE.findall(_last_tool_texts(body))][:1]
        calls = [ToolCall("search", {"queries": [" ".join(task.split()[:4])]})]
        if urls:
            calls.append(ToolCall("open_url", {"urls": urls}))
        return Answer(tool_calls=[*calls, ToolCall("generate_report", {})])
    if step == "agent_report":
        numbers = [int(n) for n, _, _ in _SOURCE.findall(user_text(body))][:3]
        return Answer(text=_sentences("this task", numbers, 6))
    if step == "report":
        numbers = [int(n) for n, _ in _SOURCE_LINE.findall(user_text(body))][:6]
        sections = "\n\n".join(f"## Part {i}\n\n{_sentences(f'part {i}', numbers, 5)}" for i in range(1, 5))
        return Answer(text=f"Descriptors take precedence over __getattr__ [{(numbers or [1])[0]}].\n\n{sections}\n")
    if step == "artifact":
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", user_text(body))][:3] or [1]
        findings = [{"text": f"Finding backed by source {n}.", "citations": [n]} for n in dict.fromkeys(numbers)]
        arguments = {
            "title": "Descriptors and __getattr__",
            "summary": "Descriptors come first.",
            "key_findings": findings,
        }
        return Answer(tool_calls=[ToolCall("record_artifact", arguments)])
    return Answer(text="No answer scripted for this step.")


def _pieces(text: str) -> Iterator[str]:
    for i in range(0, len(text), TOKEN_CHARS):
        yield text[i : i + TOKEN_CHARS]


def _event(delta: dict[str, Any] | None, *, finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
    payload: dict[str, Any] = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench",
    }
    payload["choices"] = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    if usage is not None:
        payload["usage"] = usage
    return _chunked(f"data: {json.dumps(payload)}\n\n".encode())


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def events(reply: Answer, prompt_chars: int) -> list[bytes]:
    """The reply as HTTP chunks of OpenAI stream events, one token per event."""
    out = [_event({"role": "assistant", "content": ""})]
    out += [_event({"content": piece}) for piece in _pieces(reply.text)]
    for index, call in enumerate(reply.tool_calls):
        head = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": call.name}}
        out.append(_event({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]}))
        arguments = json.dumps(call.arguments)
        out += [_event({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in _pieces(arguments)]
    out.append(_event({}, finish="tool_calls" if reply.tool_calls else "stop"))
    completion = max(1, (len(reply.text) + sum(len(json.dumps(c.arguments)) for c in reply.tool_calls)) // 4)
    prompt = max(1, prompt_chars // 4)
    out.append(_event(None, usage={"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": 0}))
    out.append(_chunked(b"data: [DONE]\n\n"))
    return out


class FakeOpenAI:
    """`with FakeOpenAI(latency) as fake:` serves `fake.base_url`; `fake.calls` records every call."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls: list[CallRecord] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _respond(self, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        record = CallRecord(step=classify(body), arrived=time.perf_counter())
        self.calls.append(record)
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body["messages"])
        chunks = events(answer(body), prompt_chars)
        first = record.arrived + self.latency / 2
        spacing = (self.latency / 2) / max(1, len(chunks) - 1)
        await asyncio.sleep(max(0.0, first - time.perf_counter()))
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
            b"connection: keep-alive\r\n\r\n"
        )
        sent = 0
        while sent < len(chunks):
            now = time.perf_counter()
            due = min(len(chunks), int((now - first) / spacing) + 1) if spacing else len(chunks)
            if due > sent:
                writer.write(b"".join(chunks[sent:due]))
                sent = due
                await writer.drain()
            if sent < len(chunks):
                await asyncio.sleep(max(0.0005, first + sent * spacing - time.perf_counter()))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        record.finished = time.perf_counter()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:  # small streamed writes: no Nagle delay
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not lines[0].startswith("POST ") or "/chat/completions" not in lines[0]:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    await writer.drain()
                    continue
                await self._respond(json.loads(body), writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()

    def __enter__(self) -> FakeOpenAI:
        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._serve())
            self._loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(5)
