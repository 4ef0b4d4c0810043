"""The test kit's fake model speaks OpenAI's streaming protocol: text and tool calls in chunks, a
usage chunk, errors as JSON, hangs released on exit, and a fixed latency per call when asked."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx

from sleuth_testkit.model import Call, Reply, ScriptedLLM

BODY = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def events(response: httpx.Response) -> list[Any]:
    """The `data:` payloads of a stream, `[DONE]` as the string."""
    payloads = [line.removeprefix("data: ") for line in response.iter_lines() if line.startswith("data: ")]
    return [payload if payload == "[DONE]" else json.loads(payload) for payload in payloads]


def post(client: httpx.Client, llm: ScriptedLLM, body: dict[str, Any] = BODY) -> tuple[int, list[Any]]:
    with client.stream("POST", f"{llm.base_url}/chat/completions", json=body) as response:
        return response.status_code, events(response) if response.status_code == 200 else [response.read()]


def test_text_streams_in_chunks_then_usage_and_done() -> None:
    with ScriptedLLM(lambda body: Reply(text="Descriptors win.", chunk_size=4)) as llm, httpx.Client() as client:
        status, stream = post(client, llm)
    assert status == 200 and stream[-1] == "[DONE]"
    deltas = [e["choices"][0]["delta"].get("content", "") for e in stream[:-2]]
    assert "".join(deltas) == "Descriptors win." and len([d for d in deltas if d]) == 4
    assert stream[-3]["choices"][0]["finish_reason"] == "stop"
    assert stream[-2]["usage"]["prompt_tokens"] == 100 and stream[-2]["usage"]["completion_tokens"] >= 1
    assert [(c.step, c.finished >= c.arrived > 0) for c in llm.calls] == [("report", True)]


def test_tool_call_arguments_arrive_split_and_whole() -> None:
    arguments = {"task": "descriptor protocol and __getattr__"}
    reply = Reply(tool_calls=[Call("research_agent", arguments)], usage=(12, 3))
    with ScriptedLLM(lambda body: reply) as llm, httpx.Client() as client:
        _, stream = post(client, llm)
    calls = [c for e in stream[:-1] if e["choices"] for c in e["choices"][0]["delta"].get("tool_calls", [])]
    assert calls[0]["function"]["name"] == "research_agent" and len(calls) > 2
    assert json.loads("".join(c["function"]["arguments"] for c in calls)) == arguments
    assert stream[-3]["choices"][0]["finish_reason"] == "tool_calls"
    assert (stream[-2]["usage"]["prompt_tokens"], stream[-2]["usage"]["completion_tokens"]) == (12, 3)


def test_errors_are_json_and_requests_share_a_connection() -> None:
    replies = iter([Reply(status=429, error_message="slow down"), Reply(text="ok")])
    with ScriptedLLM(lambda body: next(replies)) as llm, httpx.Client() as client:
        refused = post(client, llm)
        answered = post(client, llm)
        missing = client.get(f"{llm.base_url}/models")
    assert refused[0] == 429 and json.loads(refused[1][0])["error"]["message"] == "slow down"
    assert answered[0] == 200 and answered[1][-1] == "[DONE]"
    assert missing.status_code == 404 and len(llm.requests) == 2


def test_a_responder_that_raises_is_a_server_error() -> None:
    def broken(body: dict[str, Any]) -> Reply:
        raise KeyError("tools")

    with ScriptedLLM(broken) as llm, httpx.Client() as client:
        assert post(client, llm)[0] == 500


def test_a_hang_streams_its_text_then_stalls_until_the_server_stops() -> None:
    lines: list[str] = []
    text_arrived, ended = threading.Event(), threading.Event()

    def read(llm: ScriptedLLM) -> None:
        with httpx.Client() as client, client.stream("POST", f"{llm.base_url}/chat/completions", json=BODY) as response:
            for line in response.iter_lines():
                lines.append(line)
                if "partial" in line:
                    text_arrived.set()
        ended.set()

    with ScriptedLLM(lambda body: Reply(text="partial answer", hang=True, chunk_size=20)) as llm:
        reader = threading.Thread(target=read, args=(llm,))
        reader.start()
        assert text_arrived.wait(10)
        stalled = not ended.is_set()
    reader.join(5)
    assert stalled and ended.is_set()  # the answer ended only when the server stopped
    payloads = [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]
    assert [p["choices"][0]["delta"].get("content") for p in payloads] == ["", "partial answer"]
    assert all(p["choices"][0]["finish_reason"] is None for p in payloads)
    assert llm.calls[0].finished == 0.0


def test_a_call_takes_the_latency_it_is_given() -> None:
    with ScriptedLLM(lambda body: Reply(text="x" * 40, chunk_size=4), latency_s=0.3) as llm, httpx.Client() as client:
        client.post(f"{llm.base_url}/chat/completions", json=BODY)  # warm the connection
        with client.stream("POST", f"{llm.base_url}/chat/completions", json=BODY) as response:
            first_at = time.perf_counter()  # the head came with the first chunk, half the latency in
            response.read()
    call = llm.calls[-1]
    assert first_at - call.arrived >= 0.15 and call.finished - call.arrived >= 0.3
