"""The LLM gateway: every model call in Sleuth goes through `LLMGateway.complete`."""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
from typing import Any

from sleuth.config import Role, Settings
from sleuth.core import heavy
from sleuth.core.clock import Clock, SystemClock
from sleuth.core.redaction import redact_values
from sleuth.llm.capabilities import cost_usd
from sleuth.llm.repair import repair_tool_call, sanitize_messages
from sleuth.llm.retry import access_problem, backoff_delay, is_transient, root_cause
from sleuth.llm.runtime import litellm_model_name, litellm_ready
from sleuth.llm.tokens import count_message_tokens, count_tokens
from sleuth.llm.types import CallUsage, LLMResult, StreamHandlers, ToolCall

log = logging.getLogger(__name__)

# Stream chunks handled between two yields to the event loop: a burst of chunks that arrived together
# never holds the loop for long, and yielding after every chunk would cost more than it gives.
YIELD_EVERY_CHUNKS = 8


class LLMError(Exception):
    """A model call failed for good (not transient, or out of retries)."""


class ModelAccessError(Exception):
    """The provider refuses the model itself (credentials, permission, unknown model).

    Not an LLMError on purpose: steps that carry on after a failed call must not carry on
    after this one, since every later call would fail the same way.
    """


async def _call(handler: Any, *args: Any) -> None:
    if handler is None:
        return
    result = handler(*args)
    if result is not None and inspect.isawaitable(result):  # most handlers are plain functions
        await result


async def _close(stream: Any) -> None:
    """Release a stream that is left before its end (its connection goes back to the pool)."""
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()


class _Accumulator:
    """Builds one result from stream chunks, forwarding deltas to the handlers."""

    def __init__(self, handlers: StreamHandlers) -> None:
        self.handlers = handlers
        self.result = LLMResult()
        self._calls: dict[int, dict[str, str]] = {}
        self.delivered = False
        self.usage: tuple[int, int] | None = None
        self.chunks = 0

    async def add(self, chunk: Any) -> None:
        usage = getattr(chunk, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            self.usage = (int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return
        choice = choices[0]
        delta = getattr(choice, "delta", None)
        if delta is not None:
            await self._add_delta(delta)
        finish_reason = getattr(choice, "finish_reason", None)
        if finish_reason:
            first = self.result.finish_reason is None
            self.result.finish_reason = finish_reason
            if first:
                await _call(self.handlers.on_finish, self.result.content, finish_reason)

    async def _add_delta(self, delta: Any) -> None:
        reasoning = getattr(delta, "reasoning_content", None)
        if reasoning:
            self.result.reasoning += reasoning
            self.delivered = True
            await _call(self.handlers.on_reasoning, reasoning)
        content = getattr(delta, "content", None)
        if content:
            self.result.content += content
            self.delivered = True
            await _call(self.handlers.on_text, content)
        for tool_delta in getattr(delta, "tool_calls", None) or []:
            index = getattr(tool_delta, "index", None)
            index = len(self._calls) if index is None else int(index)
            slot = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            if getattr(tool_delta, "id", None):
                slot["id"] = tool_delta.id
            function = getattr(tool_delta, "function", None)
            name_part = getattr(function, "name", None) if function else None
            args_part = getattr(function, "arguments", None) if function else None
            if name_part:
                # most providers send the whole name once; some repeat it in every chunk
                slot["name"] = name_part if slot["name"] in ("", name_part) else slot["name"] + name_part
            if args_part:
                slot["arguments"] += args_part
            self.delivered = True
            await _call(self.handlers.on_tool_delta, index, slot["name"], args_part or "")

    def tool_calls(self, call_prefix: str) -> list[ToolCall]:
        return [
            ToolCall(id=slot["id"] or f"{call_prefix}_{index}", name=slot["name"], arguments=slot["arguments"])
            for index, slot in sorted(self._calls.items())
        ]


class LLMGateway:
    """Streams chat completions through litellm with retries, repair and usage accounting."""

    def __init__(self, settings: Settings, clock: Clock | None = None, rng: random.Random | None = None) -> None:
        self.settings = settings
        self.clock = clock or SystemClock()
        self.rng = rng or random.Random()
        self._call_counter = 0

    async def complete(
        self,
        role: Role,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        max_tokens: int | None = None,
        handlers: StreamHandlers | None = None,
    ) -> LLMResult:
        """One streamed model call for `role`. Tool calls come back repaired against `tools`."""
        model = self.settings.model_for(role)
        handlers = handlers or StreamHandlers()
        kwargs: dict[str, Any] = {
            "model": litellm_model_name(model),
            "messages": sanitize_messages(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.settings.llm_timeout_s,
            "max_retries": 0,  # retries are ours, with backoff on our clock
            "num_retries": 0,
        }
        if tools:
            kwargs["tools"] = tools
            if tool_choice:
                kwargs["tool_choice"] = tool_choice
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if self.settings.api_base:
            kwargs["api_base"] = self.settings.api_base
        if self.settings.api_key:
            kwargs["api_key"] = self.settings.api_key.get_secret_value()

        self._call_counter += 1
        prefix = f"call_{self._call_counter}"
        await litellm_ready()  # a CLI run starts while litellm is still loading on the preload thread
        attempt = 0
        while True:
            acc = _Accumulator(handlers)
            try:
                stream = await heavy.litellm.acompletion(**kwargs)
                async for chunk in stream:
                    await acc.add(chunk)
                    acc.chunks += 1
                    if acc.usage is not None and acc.result.finish_reason is not None:
                        # With `include_usage` the usage chunk ends the stream (it is sent after the
                        # last choice). What litellm does on the next step, rebuilding the whole
                        # response from every chunk once more for its own logging and cost, grows
                        # with the stream's length and gives nothing Sleuth uses.
                        await _close(stream)
                        break
                    if acc.chunks % YIELD_EVERY_CHUNKS == 0:
                        # Chunks that arrived together are handed over without a pause: give the
                        # other lanes and runs their turn, or a long burst holds the loop for its whole length.
                        await asyncio.sleep(0)
                break
            except Exception as exc:  # litellm raises its own hierarchy; classify, don't enumerate
                if acc.delivered:
                    # Output already reached clients; a retry would repeat it. Keep what arrived.
                    log.warning("%s stream broke after output (%s); keeping partial result", role, type(exc).__name__)
                    acc.result.truncated = True
                    break
                problem = access_problem(exc)
                if problem is not None:
                    raise ModelAccessError(
                        redact_values(
                            f"the model {model} cannot be used: {problem}: {_short(root_cause(exc))}",
                            [kwargs.get("api_key")],
                        )
                    ) from None
                if not is_transient(exc) or attempt >= self.settings.llm_retries:
                    message = redact_values(
                        f"{role} model call failed: {type(exc).__name__}: {_short(exc)}", [kwargs.get("api_key")]
                    )
                    raise LLMError(message) from None
                delay = backoff_delay(
                    attempt, self.settings.llm_backoff_base_s, self.settings.llm_backoff_max_s, self.rng
                )
                log.info("%s model call failed (%s); retry %d in %.2fs", role, type(exc).__name__, attempt + 1, delay)
                attempt += 1
                await self.clock.sleep(delay)

        result = acc.result
        schemas = {tool["function"]["name"]: tool["function"] for tool in tools or []}
        result.tool_calls = [repair_tool_call(call, schemas) for call in acc.tool_calls(prefix)]
        result.usage = self._usage(role, model, kwargs["messages"], result, acc.usage)
        return result

    def _usage(
        self, role: str, model: str, messages: list[dict[str, Any]], result: LLMResult, reported: tuple[int, int] | None
    ) -> CallUsage:
        if reported is not None:
            input_tokens, output_tokens = reported
        else:  # the provider sent no usage: count it ourselves
            input_tokens = count_message_tokens(messages)
            output_text = result.content + result.reasoning + "".join(c.arguments for c in result.tool_calls)
            output_tokens = count_tokens(output_text)
        return CallUsage(
            role=role,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd(model, input_tokens, output_tokens),
        )


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text[:300]
