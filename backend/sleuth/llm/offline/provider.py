"""litellm glue for the offline extractive model (`offline/extractive`).

litellm routes `acompletion(model="offline/extractive", stream=True, ...)` to `astreaming`,
which yields `heavy.GenericStreamingChunk`s; litellm's CustomStreamWrapper turns them into OpenAI-style
chunks: `text` -> `delta.content`, `tool_use` -> `delta.tool_calls`, `usage` -> the usage chunk.

The handler's class derives from litellm's base class, so it is made when the handler is
(`offline_handler`, once litellm has loaded): importing the offline model loads no litellm.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from functools import cache
from typing import Any

from sleuth.core import heavy
from sleuth.core.ids import new_id
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.router import respond
from sleuth.llm.tokens import count_tokens, truncate_tokens

WORDS_PER_TEXT_CHUNK = 3
ARGUMENT_CHUNK_CHARS = 24


def _usage(request: OfflineRequest, reply: Reply) -> heavy.ChatCompletionUsageBlock:
    prompt = "\n".join(
        str(m.get("content") or "") + json.dumps(m.get("tool_calls") or "") for m in request.messages
    ) + json.dumps(request.tools)
    completion = reply.text + "".join(name + json.dumps(args) for name, args in reply.tool_calls)
    prompt_tokens, completion_tokens = count_tokens(prompt), count_tokens(completion)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _text_pieces(text: str) -> list[str]:
    """A few words per delta, whitespace kept, so joining the pieces gives the text back exactly."""
    words = re.findall(r"\S+\s*|\s+", text)
    return ["".join(words[i : i + WORDS_PER_TEXT_CHUNK]) for i in range(0, len(words), WORDS_PER_TEXT_CHUNK)]


def _chunk(
    text: str = "",
    tool_use: heavy.ChatCompletionToolCallChunk | None = None,
    finish: str = "",
    usage: heavy.ChatCompletionUsageBlock | None = None,
) -> heavy.GenericStreamingChunk:
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": bool(finish),
        "finish_reason": finish,
        "usage": usage,
        "index": 0,
    }


def _limit(request: OfflineRequest, reply: Reply) -> tuple[Reply, str]:
    """Cut text at max_tokens like a provider would; the finish reason says so."""
    if request.max_tokens and reply.text:
        cut = truncate_tokens(reply.text, request.max_tokens)
        if cut != reply.text:
            return Reply(text=cut, tool_calls=reply.tool_calls), "length"
    return reply, "tool_calls" if reply.tool_calls else "stop"


def answer(messages: list[Any], optional_params: dict[str, Any] | None) -> tuple[OfflineRequest, Reply, str]:
    request = OfflineRequest.from_call(messages, optional_params)
    reply, finish = _limit(request, respond(request))
    return request, reply, finish


def chunks_for(request: OfflineRequest, reply: Reply, finish: str) -> Iterator[heavy.GenericStreamingChunk]:
    """The reply as a real model streams it: text in small deltas, then each tool call with its
    id and name first and its JSON arguments split across several chunks, then usage."""
    for piece in _text_pieces(reply.text):
        yield _chunk(text=piece)
    for index, (name, arguments) in enumerate(reply.tool_calls):
        call_id = new_id("call_offline")
        yield _chunk(
            tool_use={"id": call_id, "type": "function", "index": index, "function": {"name": name, "arguments": ""}}
        )
        encoded = json.dumps(arguments, ensure_ascii=False)
        for start in range(0, len(encoded), ARGUMENT_CHUNK_CHARS):
            yield _chunk(
                tool_use={
                    "id": None,
                    "type": "function",
                    "index": index,
                    "function": {"name": None, "arguments": encoded[start : start + ARGUMENT_CHUNK_CHARS]},
                }
            )
    yield _chunk(finish=finish, usage=_usage(request, reply))


def _model_response(model_response: Any, request: OfflineRequest, reply: Reply, finish: str) -> Any:
    tool_calls = [
        {
            "id": new_id("call_offline"),
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
        }
        for name, arguments in reply.tool_calls
    ]
    message = heavy.litellm.Message(content=reply.text or None, role="assistant", tool_calls=tool_calls or None)
    response = model_response if model_response is not None else heavy.litellm.ModelResponse()
    response.choices = [heavy.litellm.Choices(index=0, message=message, finish_reason=finish)]
    response.model = "offline/extractive"
    response.created = int(time.time())
    usage = _usage(request, reply)
    response.usage = heavy.litellm.Usage(**usage)
    return response


def offline_handler() -> heavy.CustomLLM:
    """The handler litellm calls for `offline/...` models (litellm must have loaded)."""
    return _handler_class()()


@cache
def _handler_class() -> type[heavy.CustomLLM]:
    class OfflineExtractiveLLM(heavy.CustomLLM):
        """Sleuth's embedded extractive model: it reads only the request and never raises."""

        def completion(
            self,
            model: str,
            messages: list[Any],
            *args: Any,
            optional_params: dict[str, Any] | None = None,
            model_response: Any = None,
            **kwargs: Any,
        ) -> Any:
            request, reply, finish = answer(messages, optional_params)
            return _model_response(model_response, request, reply, finish)

        async def acompletion(
            self,
            model: str,
            messages: list[Any],
            *args: Any,
            optional_params: dict[str, Any] | None = None,
            model_response: Any = None,
            **kwargs: Any,
        ) -> Any:
            request, reply, finish = await asyncio.to_thread(answer, messages, optional_params)
            return _model_response(model_response, request, reply, finish)

        def streaming(
            self,
            model: str,
            messages: list[Any],
            *args: Any,
            optional_params: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> Iterator[heavy.GenericStreamingChunk]:
            request, reply, finish = answer(messages, optional_params)
            yield from chunks_for(request, reply, finish)

        # litellm declares astreaming as a coroutine returning an iterator but iterates what it returns,
        # so an async generator is what it really calls for.
        async def astreaming(  # type: ignore[override]  # an async generator, as said above
            self,
            model: str,
            messages: list[Any],
            *args: Any,
            optional_params: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> AsyncIterator[heavy.GenericStreamingChunk]:
            # Extraction is CPU work on long pages; a thread keeps parallel agents' streams flowing.
            request, reply, finish = await asyncio.to_thread(answer, messages, optional_params)
            for chunk in chunks_for(request, reply, finish):
                yield chunk
                await asyncio.sleep(0)  # let other lanes' chunks interleave, as network streams would

    return OfflineExtractiveLLM
