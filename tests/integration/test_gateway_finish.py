"""The gateway tells its caller the model has finished before the provider's usage arrives."""

from __future__ import annotations

import threading

from sleuth.llm.gateway import LLMGateway
from sleuth.llm.types import StreamHandlers
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM

TEXT = "Data descriptors take precedence over the instance dictionary [1]."


async def test_the_finish_comes_with_the_whole_text_before_the_usage_and_the_usage_is_the_providers() -> None:
    usage_sent = threading.Event()  # released only by the finish handler: a gateway that waits for usage first hangs
    finished: list[tuple[str, str, bool]] = []

    def on_finish(content: str, finish_reason: str) -> None:
        finished.append((content, finish_reason, usage_sent.is_set()))
        usage_sent.set()

    with ScriptedLLM(lambda body: Reply(text=TEXT, chunk_size=5, usage=(321, 17), usage_gate=usage_sent)) as llm:
        timer = threading.Timer(20, usage_sent.set)  # a failing gateway ends the test instead of hanging it
        timer.start()
        try:
            gateway = LLMGateway(scripted_settings(llm))
            result = await gateway.complete(
                "report", [{"role": "user", "content": "Why?"}], handlers=StreamHandlers(on_finish=on_finish)
            )
        finally:
            timer.cancel()
    assert finished == [(TEXT, "stop", False)]  # once, whole, while the usage was still held
    assert result.content == TEXT and result.finish_reason == "stop"
    assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (321, 17)
