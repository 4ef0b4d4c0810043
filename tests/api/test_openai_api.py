"""The OpenAI-compatible chat API, driven by the official `openai` client against a real server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from openai import AsyncOpenAI

from conftest import QUESTION, LiveServer, live_server, read_events
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel

QUESTIONS = "1. Which Python version do you mean?\n2. CPython or PyPy?"
NO_CLARIFY = {"sleuth": {"clarify": False}}


def client_of(server: LiveServer, key: str = "unused") -> AsyncOpenAI:
    return AsyncOpenAI(base_url=f"{server.base_url}/v1", api_key=key, max_retries=0, timeout=120)


def run_id_of(completion_id: str) -> str:
    return completion_id.removeprefix("chatcmpl-")


async def packets_of(server: LiveServer, run_id: str) -> dict:  # type: ignore[type-arg]
    """The run's packet objects by type (the last of each)."""
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
        return {o["type"]: o for o in (json.loads(e.data)["obj"] for e in await read_events(http, run_id))}


async def test_models_are_the_research_modes(shared_server: LiveServer) -> None:
    models = [model.id async for model in client_of(shared_server).models.list()]
    assert models == ["sleuth", "sleuth-heavy", "sleuth-light"]


async def test_a_completion_is_the_verified_report_with_its_sources_and_real_usage(shared_server: LiveServer) -> None:
    completion = await client_of(shared_server).chat.completions.create(
        model="sleuth-light",
        messages=[{"role": "user", "content": QUESTION}],
        metadata={"clarify": "false", "time_budget_s": "300"},  # for clients that can set only metadata
    )
    message = completion.choices[0].message
    assert message.content is not None and message.content.startswith(f"# {QUESTION}")
    report, _, sources = message.content.partition("## Sources")
    assert "[1]" in report and sources.strip().startswith("1. [")
    reasoning = (message.model_extra or {})["reasoning_content"]
    assert reasoning.startswith("Researching: ") and "Searching: " in reasoning and "Writing the report" in reasoning
    packets = await packets_of(shared_server, run_id_of(completion.id))
    summary = packets["summary"]
    assert packets["run_start"]["time_budget_s"] == 300
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (
        summary["input_tokens"],
        summary["output_tokens"],
    )
    assert completion.usage.prompt_tokens > 0 and completion.choices[0].finish_reason == "stop"


async def test_a_stream_sends_progress_as_reasoning_then_the_report_then_usage(shared_server: LiveServer) -> None:
    stream = await client_of(shared_server).chat.completions.create(
        model="sleuth",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        extra_body={"sleuth": {"clarify": False, "time_budget_s": 600}},
    )
    order: list[str] = []
    reasoning, content, usage, finish = "", "", None, None
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
            order.append("usage")
            continue
        delta = chunk.choices[0].delta
        finish = chunk.choices[0].finish_reason or finish
        if (step := (delta.model_extra or {}).get("reasoning_content")) is not None:
            reasoning += step
            order.append("reasoning")
        if delta.content:
            content += delta.content
            order.append("content")
    assert order[0] == "reasoning" and order[-1] == "usage"
    assert order.index("content") > max(i for i, kind in enumerate(order) if kind == "reasoning")  # report last
    assert "Plan:\n1. " in reasoning and "Started: " in reasoning
    assert content.startswith(f"# {QUESTION}") and "## Sources" in content and finish == "stop"
    packets = await packets_of(shared_server, run_id_of(chunk.id))
    summary = packets["summary"]
    assert usage is not None and usage.total_tokens == summary["input_tokens"] + summary["output_tokens"]
    assert packets["run_start"]["time_budget_s"] == 600 and packets["run_start"]["mode"] == "heavy"


@pytest.fixture
def clarifying_server() -> Iterator[LiveServer]:
    with (
        ScriptedLLM(ResearchModel(clarify_questions=QUESTIONS)) as scripted,
        live_server(scripted_settings(scripted)) as live,
    ):
        yield live


async def test_a_clarifying_question_comes_back_and_the_next_message_answers_it(
    clarifying_server: LiveServer,
) -> None:
    client = client_of(clarifying_server)
    asked = await client.chat.completions.create(model="sleuth", messages=[{"role": "user", "content": QUESTION}])
    questions = asked.choices[0].message.content
    assert questions == QUESTIONS
    answered = await client.chat.completions.create(
        model="sleuth",
        messages=[
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": questions},
            {"role": "user", "content": "Python 3.12 on CPython."},
        ],
    )
    assert (answered.choices[0].message.content or "").startswith(f"# {QUESTION}")  # the original question
    async with httpx.AsyncClient(base_url=clarifying_server.base_url) as http:
        first = (await http.get(f"/api/runs/{run_id_of(asked.id)}")).json()
        second = (await http.get(f"/api/runs/{run_id_of(answered.id)}")).json()
    assert second["session_id"] == first["session_id"] and second["kind"] == "clarification_answer"


async def test_errors_come_in_openais_shape(shared_server: LiveServer) -> None:
    client = client_of(shared_server)
    with pytest.raises(openai.NotFoundError) as missing:
        await client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert missing.value.code == "model_not_found" and "sleuth-light" in missing.value.message
    with pytest.raises(openai.BadRequestError) as bad:
        await client.chat.completions.create(model="sleuth", messages=[{"role": "assistant", "content": "hi"}])
    assert bad.value.code is None and "last message must be the user's" in bad.value.message
    with pytest.raises(openai.BadRequestError) as budget:
        await client.chat.completions.create(
            model="sleuth", messages=[{"role": "user", "content": "hi"}], extra_body={"sleuth": {"time_budget_s": 1}}
        )
    assert "time_budget_s" in budget.value.message
    for metadata in ({"time_budget_s": "soon"}, {"time_budget_s": "1"}, {"clarify": "maybe"}):
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(
                model="sleuth", messages=[{"role": "user", "content": "hi"}], metadata=metadata
            )
        assert next(iter(metadata)) in refused.value.message


def test_a_guarded_server_wants_the_token_as_the_api_key(llm: ScriptedLLM) -> None:
    async def ask(server: LiveServer, key: str) -> list[str]:
        return [model.id async for model in client_of(server, key).models.list()]

    with live_server(scripted_settings(llm, api_token="s3cret-token")) as guarded:
        assert asyncio.run(ask(guarded, "s3cret-token"))[0] == "sleuth"
        with pytest.raises(openai.AuthenticationError) as refused:
            asyncio.run(ask(guarded, "wrong"))
    assert refused.value.code == "invalid_api_key" and "s3cret" not in str(refused.value.body)


async def test_closing_a_stream_cancels_its_run(hanging_server: LiveServer) -> None:
    stream = await client_of(hanging_server).chat.completions.create(
        model="sleuth", messages=[{"role": "user", "content": QUESTION}], stream=True, extra_body=NO_CLARIFY
    )
    async for chunk in stream:
        if (chunk.choices[0].delta.model_extra or {}).get("reasoning_content"):
            break  # the run has started
    await stream.close()
    assert (await packets_of(hanging_server, run_id_of(chunk.id)))["stop"]["reason"] == "cancelled"
