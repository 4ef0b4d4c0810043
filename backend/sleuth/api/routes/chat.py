"""The OpenAI-compatible chat API: `GET /v1/models`, `POST /v1/chat/completions`.

A chat request is one research run. The last user message is the question; when the message
before it is a question Sleuth asked and still waits on, it is the answer; earlier turns otherwise
go along as the conversation so far, as in a session.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse

from sleuth.api.openai_chat import ChatReply, asking
from sleuth.api.openai_schemas import (
    MODELS,
    ChatCompletion,
    ChatMessage,
    ChatRequest,
    Choice,
    ModelCard,
    ModelList,
    ReplyMessage,
)
from sleuth.api.routes.deps import manager_of, settings_of, store_of
from sleuth.api.routes.launch import check_capacity, check_length, chosen_sources, start_run
from sleuth.api.sse import run_objects
from sleuth.core.ids import new_id
from sleuth.stream.results import PriorReport

router = APIRouter(tags=["openai"])


@router.get("/models", response_model=ModelList)
async def list_models() -> ModelList:
    return ModelList(data=[ModelCard(id=name) for name in MODELS])


@router.post("/chat/completions", response_model=None)
async def chat_completions(request: Request, body: ChatRequest) -> JSONResponse | StreamingResponse:
    mode = MODELS.get(body.model)
    if mode is None:
        known = ", ".join(MODELS)
        raise HTTPException(status_code=404, detail=f"model {body.model!r} does not exist; the models are {known}")
    options = body.options()
    question = body.messages[-1].text
    check_length(request, question)
    earlier = body.messages[:-1]
    asked = earlier[-1].text if earlier and earlier[-1].role == "assistant" else None
    session_id = await _session_asking(request, asked) if asked else None
    await check_capacity(request, session_id)
    created = await start_run(
        request,
        session_id or new_id("s"),
        question,
        mode=mode,
        clarify=options.clarify,
        time_budget_s=options.time_budget_s,
        chosen=chosen_sources(options.sources),
        new_session=session_id is None,
        prior=None if session_id else _conversation(earlier),
    )
    reply_id = f"chatcmpl-{created.run_id}"
    follow = _packets(request, created.run_id)
    if body.stream:
        return StreamingResponse(
            _chunks(follow, reply_id, body.model), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )
    reply = ChatReply()
    async for obj in follow:
        if obj is not None:
            reply.read(obj)
    if not reply.content:
        raise HTTPException(status_code=500, detail="the research ended without a report")
    completion = ChatCompletion(
        id=reply_id,
        created=int(time.time()),
        model=body.model,
        choices=[Choice(message=ReplyMessage(content=reply.content, reasoning_content="\n".join(reply.reasoning)))],
        usage=reply.usage,
    )
    return JSONResponse(completion.model_dump(mode="json"))


# How many of the latest runs waiting for an answer a reply is matched against.
WAITING_RUNS = 500


async def _session_asking(request: Request, asked: str) -> str | None:
    """The session that asked exactly `asked` (as this API words clarifying questions) and waits for the answer."""
    waiting = await asyncio.to_thread(store_of(request).waiting_for_answers, WAITING_RUNS)
    return next((session for session, questions in waiting if asking(questions) == asked.strip()), None)


def _conversation(messages: list[ChatMessage]) -> list[PriorReport]:
    """Earlier (question, answer) turns of a conversation held by the client."""
    turns: list[PriorReport] = []
    question = ""
    for message in messages:
        if message.role == "user":
            question = message.text
        elif message.role == "assistant" and question and message.text.strip():
            turns.append(PriorReport(question=question, markdown=message.text))
            question = ""
    return turns


async def _packets(request: Request, run_id: str) -> AsyncIterator[dict[str, Any] | None]:
    """The run's packet objects, up to `stop`; None for a quiet stretch (`run_objects`).

    A client that goes away before `stop` (a chat UI's stop button closes the connection) cancels
    the run, as `POST /api/runs/{id}/cancel` would.
    """
    manager = manager_of(request)
    stopped = False
    try:
        async for obj in run_objects(manager, store_of(request), run_id, heartbeat_s=settings_of(request).heartbeat_s):
            stopped = obj is not None and obj["type"] == "stop"
            yield obj
    finally:
        if not stopped:
            await asyncio.shield(manager.cancel(run_id))


async def _chunks(packets: AsyncIterator[dict[str, Any] | None], reply_id: str, model: str) -> AsyncIterator[bytes]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
        choices = [] if usage is not None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        body = {"id": reply_id, "object": "chat.completion.chunk", "created": created, "model": model}
        body |= {"choices": choices, "usage": usage}
        return f"data: {json.dumps(body)}\n\n".encode()

    reply = ChatReply()
    yield chunk({"role": "assistant", "content": ""})
    async for obj in packets:
        if obj is None:
            yield b": heartbeat\n\n"
            continue
        reasoning, content = reply.read(obj)
        if reasoning:
            yield chunk({"reasoning_content": reasoning})
        if content:
            yield chunk({"content": content})
    yield chunk({}, finish="stop")
    if reply.usage is not None:
        yield chunk({}, usage=reply.usage.model_dump())
    yield b"data: [DONE]\n\n"
