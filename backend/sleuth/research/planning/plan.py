"""The research plan: one streamed model step, parsed into at most `plan_max_steps` steps."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sleuth.llm.gateway import LLMError
from sleuth.llm.prompting import render
from sleuth.llm.types import StreamHandlers
from sleuth.research.planning.context import history_text
from sleuth.research.state import RunState
from sleuth.research.step import OutputCap, llm_step
from sleuth.stream.packets import Error, PlanDelta, PlanDone, PlanStart, SectionEnd

# "1. x", "2) x", "- x", "Step 3: x", also wrapped in bold or behind a heading mark
_STEP = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:\d+[.)]|[-*•]|Step\s+\d+[:.)]?)\s+(.+?)\s*$", re.I)


def parse_plan(text: str, max_steps: int) -> list[str]:
    """Numbered (or bulleted) steps from the model's text; empty when nothing usable is there."""
    steps = []
    for line in text.splitlines():
        match = _STEP.match(line)
        if match:
            step = match.group(1).strip().strip("*").strip()
            if len(step) >= 3:
                steps.append(step)
    return steps[:max_steps]


@dataclass(frozen=True)
class PlanRevision:
    """The plan the user saw and their feedback on it: the planner answers it as the next turn."""

    previous: list[str]
    feedback: str

    def messages(self) -> list[dict[str, str]]:
        numbered = "\n".join(f"{i}. {step}" for i, step in enumerate(self.previous, 1))
        return [{"role": "assistant", "content": numbered}, {"role": "user", "content": self.feedback}]


async def make_plan(state: RunState, revision: PlanRevision | None = None) -> list[str]:
    """Stream the plan to clients; fall back to a one-step plan rather than fail."""
    request = state.request
    state.new_turn()
    state.emit(PlanStart(content=""))
    system = render(
        "plan",
        today=state.today,
        max_steps=state.limits.plan_max_steps,
        history=history_text(request.history),
    )
    user = render(
        "plan_user",
        question=request.question,
        clarification=request.clarification,
        max_steps=state.settings.plan_max_steps,
        earlier_questions=[item.question for item in request.history],
    )
    cap = OutputCap("plan", state.settings.plan_max_tokens, lambda delta: state.emit(PlanDelta(content=delta)))
    try:
        result = await llm_step(
            state,
            "planner",
            [{"role": "system", "content": system}, {"role": "user", "content": user}]
            + (revision.messages() if revision else []),
            max_tokens=cap.max_tokens,
            handlers=StreamHandlers(on_text=cap.on_text),
        )
        steps = parse_plan(cap.keep(result.content, result.finish_reason), state.limits.plan_max_steps)
        if cap.cut:
            state.emit(cap.degraded())
    except LLMError as exc:
        state.emit(Error(message=f"Planning failed; researching the question as one step. ({exc})", recoverable=True))
        steps = []
    if not steps:
        steps = revision.previous if revision else [request.question]
    state.plan = steps
    state.emit(PlanDone(steps=steps))
    state.emit(SectionEnd())
    return steps
