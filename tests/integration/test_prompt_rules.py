"""What every prompt tells the model, checked on the requests a scripted model really receives."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest

from sleuth.llm.prompt_facts import OrchestratorTurnFacts, read_facts
from sleuth.stream.results import ClarificationExchange, ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Call, Reply, ScriptedLLM, classify
from sleuth_testkit.scenarios import ResearchModel
from support.invariants import check_invariants

LANGUAGE_RULE = "write in the language of the user's question"
STEPS = {"clarifier", "planner", "orchestrator", "agent", "agent_report", "report", "artifact"}


def system_prompt(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] or "" for m in body["messages"] if m["role"] == "system")


def last_user(body: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


@pytest.mark.parametrize(
    "question",
    [
        "¿Cómo interactúan los descriptores de Python y __getattr__ durante la búsqueda de atributos?",
        "Python 的描述符和 __getattr__ 在属性查找过程中如何交互？",
    ],
)
async def test_every_request_carries_the_date_and_the_language_rule(question: str) -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm), question)
        requests = list(llm.requests)
    check_invariants(run.packets)
    assert run.stop_reason == "completed"
    assert {classify(body) for body in requests} == STEPS  # every kind of step was asked
    today = dt.date.today().isoformat()
    for body in requests:
        prompt = system_prompt(body)
        assert LANGUAGE_RULE in prompt and today in prompt, classify(body)
    # the question reaches the steps that may see it verbatim, in its own script
    planner = requests[[classify(b) for b in requests].index("planner")]
    assert question in json.dumps(planner["messages"], ensure_ascii=False)


async def test_orchestrator_turns_say_a_rising_cycle_the_time_left_and_the_uncovered_steps() -> None:
    model = ResearchModel(tasks_per_cycle=[["how descriptors work"], ["how __getattr__ is used"]])
    with ScriptedLLM(model) as llm:
        await run_engine(scripted_settings(llm, max_cycles=6), QUESTION)
        turns = [last_user(body) for body in llm.requests_for("orchestrator")]
    cycles = [tuple(map(int, re.search(r"Cycle (\d+) of (\d+)\.", text).groups())) for text in turns]  # type: ignore[union-attr]
    assert [c for c, _ in cycles] == list(range(1, len(turns) + 1)) and {m for _, m in cycles} == {6}
    assert all(re.search(r"Time left: about \d+", text) for text in turns)
    # each task named no plan step, so the engine matched it to the step whose words it shares
    first, later = turns[0], turns[-1]
    assert "no findings yet: 1. How descriptors work; 2. How __getattr__ is used; 3." in first
    assert "no findings yet: 3. How they interact in lookup." in later
    facts = read_facts([later], OrchestratorTurnFacts)
    assert facts is not None and facts.uncovered_steps == [3] and facts.attempts == {1: 1, 2: 1}


QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


class ThinksWhileDispatching(ResearchModel):
    """Sends `think_tool` and two agents in its first turn, then the agents again alone."""

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        tasks = [Call("research_agent", {"task": t, "plan_step": n}) for n, t in enumerate(self.tasks_per_cycle[0], 1)]
        if turns == 0:
            return Reply(tool_calls=[Call("think_tool", {"reasoning": "Plan the first round."}), *tasks])
        if turns == 1:
            return Reply(tool_calls=tasks)
        return Reply(tool_calls=[Call("generate_report", {})])


async def test_a_turn_that_thinks_and_dispatches_gets_its_thinking_only_and_is_told_why() -> None:
    model = ThinksWhileDispatching(tasks_per_cycle=[["descriptor protocol", "__getattr__ fallback"]])
    with ScriptedLLM(model) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
        second = llm.requests_for("orchestrator")[1]
    check_invariants(run.packets)
    answers = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert answers[0] == "Noted. Continue."  # the think call, answered first
    assert len(answers) == 3 and all(a.startswith("Not run:") and "think_tool" in a for a in answers[1:])
    # the agents ran only when sent again on their own: one branching, in the second turn
    assert [p.obj.num_parallel_branches for p in run.of("top_level_branching")] == [2]
    reasoning = run.of("reasoning_done")
    assert reasoning and reasoning[0].placement.turn_index < run.of("top_level_branching")[0].placement.turn_index
    assert run.stop_reason == "completed" and run.of("report")[0].obj.sources


async def test_clarified_constraints_and_mode_reach_the_report_prompt() -> None:
    exchange = ClarificationExchange(questions=["Which version?"], answer="Python 3.12 only")
    request = ResearchRequest(question="descriptors?", clarification=exchange, mode="light")
    with ScriptedLLM(ResearchModel()) as llm:
        await run_engine(scripted_settings(llm), request)
        report = llm.requests_for("report")[0]
        planner = llm.requests_for("planner")[0]
    assert "800 to 1500 words" in system_prompt(report) and "a focused report" in system_prompt(report)
    assert "Python 3.12 only" in last_user(report) and "constraints on the plan" in last_user(planner)
    assert report["max_tokens"] == 8192


async def test_reasoning_models_are_told_to_reason_between_rounds_instead_of_think_tool() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        await run_engine(scripted_settings(llm, reasoning=True), ResearchRequest(question=QUESTION, clarify=False))
        orchestrator = system_prompt(llm.requests_for("orchestrator")[0])
        agent = system_prompt(llm.requests_for("agent")[0])
    assert "between rounds, reason about what the findings establish" in orchestrator
    assert "`think_tool`" not in orchestrator and "`think_tool`" not in agent
    assert "reflect before your next call" in agent
