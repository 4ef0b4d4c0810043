"""The orchestrator step: one `research_agent` per uncovered plan step, `think_tool` alone between
rounds when the cycles allow it, `generate_report` when the plan is covered or the cycles run out.

Everything it knows comes from the facts the prompts declare: the plan, the per-turn cap and the
cycle budget (system prompt), and per turn the cycle number, the uncovered plan steps and how many
agents each step has had (`sleuth.llm.prompt_facts`).
"""

from __future__ import annotations

import math
import re

from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.prompt_facts import OrchestratorFacts, OrchestratorTurnFacts
from sleuth.llm.prompting import render

MAX_ATTEMPTS_PER_STEP = 2  # a failed or empty agent is retried once, then the step is given up


def _without_scope(step: str, answer: str) -> str:
    """The step without the scope the planner attached to it (the task states the scope itself)."""
    match = re.search(r"\s*\(([^()]*)\)$", step)
    if match and answer and all(part.strip() in answer for part in match.group(1).split(";")):
        return step[: match.start()]
    return step


def _scope(step: str, answer: str) -> str:
    match = re.search(r"\(([^()]*)\)$", step)
    return match.group(1) if match and _without_scope(step, answer) != step else ""


def _last_turn_dispatched(request: OfflineRequest) -> bool:
    exchanges = request.exchanges()
    last = max((e.turn for e in exchanges), default=-1)
    return any(e.turn == last and e.name == "research_agent" for e in exchanges)


def orchestrate(request: OfflineRequest) -> Reply:
    setup = request.facts(OrchestratorFacts)
    turn = request.facts(OrchestratorTurnFacts)
    if setup is None or turn is None:  # not a Sleuth orchestrator prompt: nothing to direct
        return Reply(tool_calls=[("generate_report", {})])
    plan = setup.plan or [setup.question]
    answer = setup.clarification.answer if setup.clarification else ""
    remaining = turn.max_cycles - turn.cycle + 1  # including this turn
    uncovered = [n for n in turn.uncovered_steps if 1 <= n <= len(plan)]
    pending = [n for n in uncovered if turn.attempts.get(n, 0) < MAX_ATTEMPTS_PER_STEP]
    if not pending or remaining <= 1:
        # the last cycle must be the report, or the engine writes it from whatever exists
        return Reply(tool_calls=[("generate_report", {})])

    cap = max(1, setup.max_parallel)
    rounds_needed = math.ceil(len(pending) / cap)
    if request.offers("think_tool") and _last_turn_dispatched(request) and remaining >= rounds_needed + 2:
        # thinking is a turn of its own (never beside dispatches), so only when cycles are to spare
        reasoning = render(
            "offline/think",
            covered=[{"number": n, "step": plan[n - 1]} for n in range(1, len(plan) + 1) if n not in uncovered],
            missing=[{"number": n, "step": plan[n - 1]} for n in uncovered],
            failed=[{"number": n} for n in pending if turn.attempts.get(n, 0)],
            next=[{"number": n} for n in pending[:cap]],
        )
        return Reply(tool_calls=[("think_tool", {"reasoning": reasoning})])
    dispatch = [
        (
            "research_agent",
            {
                "task": render(
                    "offline/agent_task",
                    step=_without_scope(plan[n - 1], answer),
                    scope=_scope(plan[n - 1], answer),
                    question=setup.question,
                ),
                "plan_step": n,
            },
        )
        for n in pending[:cap]
    ]
    return Reply(tool_calls=dispatch)
