"""The orchestrator step: one `research_agent` per uncovered plan step, `think_tool` between
rounds, `generate_report` when the plan is covered or the rounds are nearly spent.

Everything it knows comes from the request: the plan, the per-turn cap and the round budget
from the system prompt, and which steps have reports from the tool results in the conversation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sleuth.llm.offline.request import OfflineRequest, Reply, ToolExchange
from sleuth.llm.offline.text import overlap, term_set
from sleuth.prompting import render

DEFAULT_CAP = 3
DEFAULT_ROUNDS = 8
MAX_ATTEMPTS_PER_STEP = 2  # a failed or empty agent is retried once, then the step is given up

# Tool results that mean "this agent produced nothing" (the engine's responses/*.j2 wording).
_NOT_RUN = re.compile(r"^Not run:", re.I)
_NO_REPORT = re.compile(
    r"(failed and returned nothing|timed out and was stopped|found nothing it could cite|did not contain statements)",
    re.I,
)


@dataclass
class StepState:
    number: int
    step: str
    reported: bool = False
    attempts: int = 0


def parse_plan(system: str) -> list[str]:
    """The numbered steps under "Research plan:" in the orchestrator's system prompt."""
    match = re.search(r"Research plan:\s*\n(.*?)(?:\n\s*\n|$)", system, re.S)
    block = match.group(1) if match else ""
    return [
        re.sub(r"^\s*\d+[.)]\s*", "", line).strip() for line in block.splitlines() if re.match(r"^\s*\d+[.)]", line)
    ]


def _number(pattern: str, text: str, default: int) -> int:
    match = re.search(pattern, text)
    return max(1, int(match.group(1))) if match else default


def parse_question(user: str) -> str:
    """The question from the orchestrator's user message (without the clarification block)."""
    return re.split(r"\n\s*\(Clarifying questions asked:", user)[0].strip() or user.strip()


def _step_for(task: str, steps: list[StepState]) -> StepState | None:
    """The plan step a task was written for: contains it verbatim, else the best term overlap."""
    lowered = task.lower()
    for state in steps:
        if state.step.lower() in lowered:
            return state
    task_terms = term_set(task)
    scored = [(overlap(task_terms, term_set(state.step)), -state.number, state) for state in steps]
    best = max(scored, default=None, key=lambda item: (item[0], item[1]))
    return best[2] if best and best[0] >= 0.5 else None


def _track(steps: list[StepState], exchanges: list[ToolExchange]) -> None:
    for exchange in exchanges:
        if exchange.name != "research_agent":
            continue
        state = _step_for(str(exchange.arguments.get("task", "")), steps)
        if state is None or exchange.result is None or _NOT_RUN.search(exchange.result.strip()):
            continue  # refused by the cap: it never ran, so it is not an attempt
        state.attempts += 1
        if not _NO_REPORT.search(exchange.result) and re.search(r"\[\d+\]", exchange.result):
            state.reported = True


def orchestrate(request: OfflineRequest) -> Reply:
    system = request.system
    question = parse_question(request.first_user)
    plan = parse_plan(system) or [question or "the user's question"]
    cap = _number(r"up to (\d+) times in one turn", system, DEFAULT_CAP)
    rounds = _number(r"at most (\d+) rounds in total", system, DEFAULT_ROUNDS)
    steps = [StepState(i, step) for i, step in enumerate(plan, 1)]
    exchanges = request.exchanges()
    _track(steps, exchanges)

    used = request.assistant_turns
    remaining = rounds - used  # including this turn
    pending = [s for s in steps if not s.reported and s.attempts < MAX_ATTEMPTS_PER_STEP]
    if not pending or remaining <= 1:
        # the last round must be the report, or the engine writes it from whatever exists
        return Reply(tool_calls=[("generate_report", {})])

    batch = pending[:cap]
    last_turn = max((e.turn for e in exchanges), default=-1)
    last_names = {e.name for e in exchanges if e.turn == last_turn}
    dispatch = [
        ("research_agent", {"task": render("offline/agent_task", step=state.step, question=question)})
        for state in batch
    ]
    # Between rounds (right after agents reported) note what is covered, in the same turn as the
    # next dispatch: thinking must not cost a research round.
    if request.offers("think_tool") and "research_agent" in last_names:
        reasoning = render(
            "offline/think",
            covered=[s for s in steps if s.reported],
            missing=[s for s in steps if not s.reported],
            failed=[s for s in batch if s.attempts],
            next=batch,
        )
        return Reply(tool_calls=[("think_tool", {"reasoning": reasoning}), *dispatch])
    return Reply(tool_calls=dispatch)
