"""Clarification: one model step where calling `generate_plan` means the question is clear."""

from __future__ import annotations

import re

from sleuth.llm.prompting import render
from sleuth.llm.types import StreamHandlers
from sleuth.research import tool_schemas
from sleuth.research.planning.context import history_text
from sleuth.research.state import RunState
from sleuth.research.step import llm_step
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

    def on_text(delta: str) -> None:
        nonlocal started
        if not started:
            started = True
            state.new_turn()
            state.emit(MessageStart(final_documents=[]))
        state.emit(MessageDelta(content=delta))

    system = render(
        "clarify",
        today=state.today,
        history=history_text(request.history, state.settings.history_max_tokens),
        earlier_questions=[item.question for item in request.history],
    )
    result = await llm_step(
        state,
        "clarifier",
        [{"role": "system", "content": system}, {"role": "user", "content": request.question}],
        tools=[tool_schemas.generate_plan()],
        tool_choice="auto",
        handlers=StreamHandlers(on_text=on_text),
    )
    if any(call.resolved_name == tool_schemas.GENERATE_PLAN for call in result.tool_calls):
        if started:
            state.emit(SectionEnd())
        return None
    if not result.content.strip():
        return None  # neither questions nor a plan call: treat the question as clear
    questions = parse_questions(result.content)
    state.emit(Clarification(questions=questions))
    state.emit(SectionEnd())
    return questions
