"""Clarification: one model step where calling `generate_plan` means the question is clear."""

from __future__ import annotations

import re

from sleuth.llm.prompting import render
from sleuth.llm.types import StreamHandlers
from sleuth.research import tool_schemas
from sleuth.research.planning.context import history_text
from sleuth.research.state import RunState
from sleuth.research.step import OutputCap, llm_step
from sleuth.stream.packets import Clarification, MessageDelta, MessageStart, SectionEnd


def parse_questions(text: str) -> list[str]:
    """Numbered or bulleted lines, else sentences ending in '?', else the whole text."""
    items = [
        re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", line).strip()
        for line in text.splitlines()
        if re.match(r"^\s*(?:\d+[.)]|[-*•])\s+\S", line)
    ]
    if items:
        return items
    questions = [q.strip() for q in re.findall(r"[^.?!\n]*\?", text) if q.strip()]
    return questions or [text.strip()]


async def clarify(state: RunState) -> list[str] | None:
    """Ask the model whether the question needs clarifying. Returns the questions, or None to go on."""
    request = state.request
    started = False

    def forward(delta: str) -> None:
        nonlocal started
        if not started:
            started = True
            state.new_turn()
            state.emit(MessageStart(final_documents=[]))
        state.emit(MessageDelta(content=delta))

    # Capped like every model output: the questions are stored, streamed, and sent back in the
    # prompts of the run that answers them.
    cap = OutputCap("clarification", state.settings.clarification_max_tokens, forward)

    system = render(
        "clarify",
        today=state.today,
        history=history_text(request.history),
        earlier_questions=[item.question for item in request.history],
    )
    result = await llm_step(
        state,
        "clarifier",
        [{"role": "system", "content": system}, {"role": "user", "content": request.question}],
        tools=[tool_schemas.generate_plan()],
        tool_choice="auto",
        max_tokens=cap.max_tokens,
        handlers=StreamHandlers(on_text=cap.on_text),
    )
    text = cap.keep(result.content, result.finish_reason)
    if cap.cut and text.strip():
        state.emit(cap.degraded())
    if any(call.resolved_name == tool_schemas.GENERATE_PLAN for call in result.tool_calls):
        if started:
            state.emit(SectionEnd())
        return None
    if not text.strip():
        return None  # neither questions nor a plan call: treat the question as clear
    questions = parse_questions(text)
    state.emit(Clarification(questions=questions))
    state.emit(SectionEnd())
    return questions
