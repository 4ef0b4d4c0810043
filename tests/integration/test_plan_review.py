"""Plan review in the engine: approve, edit, feedback rounds up to the limit, timeout; waiting costs no budget."""

from __future__ import annotations

import pytest

from sleuth.core.clock import ScaledClock
from sleuth.research.planning.review import PlanAnswer, PlanInbox
from sleuth.stream.results import ResearchRequest
from sleuth_testkit.clock import VirtualClock
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
PLANNED = ["How descriptors work", "How __getattr__ is used", "How they interact in lookup"]


class Scripted:
    """A reviewer that gives these answers in order and records what it was shown."""

    def __init__(self, *answers: PlanAnswer) -> None:
        self.answers = list(answers)
        self.shown: list[tuple[list[str], int, int]] = []

    async def review(self, steps: list[str], round: int, max_rounds: int) -> PlanAnswer:
        self.shown.append((steps, round, max_rounds))
        return self.answers.pop(0)


def _request() -> ResearchRequest:
    return ResearchRequest(question=QUESTION, clarify=False, review_plan=True)


async def test_approve_runs_the_plan_as_proposed() -> None:
    reviewer = Scripted(PlanAnswer(approve=True))
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm), _request(), reviewer=reviewer)
    check_invariants(run.packets)
    kinds = [p.obj.type for p in run.packets]
    assert kinds.index("plan_done") < kinds.index("plan_review") < kinds.index("plan_reviewed")
    assert kinds.index("plan_reviewed") < kinds.index("top_level_branching")  # research waits for the answer
    assert run.of("plan_review")[0].obj.steps == PLANNED
    assert run.of("plan_reviewed")[0].obj.outcome == "approved"
    assert reviewer.shown == [(PLANNED, 1, 3)]
    assert run.stop_reason == "completed" and run.result.plan == PLANNED


async def test_edited_steps_are_used_as_given() -> None:
    edited = ("Read the descriptor HOWTO", "  Compare __getattribute__ with __getattr__  ", "")
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm), _request(), reviewer=Scripted(PlanAnswer(steps=edited)))
        orchestrator_system = llm.requests_for("orchestrator")[0]["messages"][0]["content"]
    wanted = ["Read the descriptor HOWTO", "Compare __getattribute__ with __getattr__"]
    assert run.of("plan_reviewed")[0].obj.outcome == "edited"
    assert run.of("plan_reviewed")[0].obj.steps == wanted == run.result.plan
    assert all(step in orchestrator_system for step in wanted)
    assert PLANNED[0] not in orchestrator_system


async def test_edited_steps_lose_control_and_bidi_characters_whichever_reviewer_sends_them() -> None:
    """The engine cleans every reviewer's edits (API, the --review-plan editor, a worker's inbox)
    with the one label rule: a step with nothing visible left is dropped, like a blank line."""
    edited = ("\x1b[31mRead\x00 the\x07 HOWTO\u202e", "\u200b\u200d\u2066", "Compare\tboth\x7f")
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm), _request(), reviewer=Scripted(PlanAnswer(steps=edited)))
        orchestrator_system = llm.requests_for("orchestrator")[0]["messages"][0]["content"]
    wanted = ["[31mRead the HOWTO", "Compare both"]
    assert run.of("plan_reviewed")[0].obj.steps == wanted == run.result.plan
    assert "\x1b" not in orchestrator_system and "\u202e" not in orchestrator_system


async def test_feedback_revises_the_plan_and_asks_again() -> None:
    reviewer = Scripted(PlanAnswer(feedback="Also cover __slots__"), PlanAnswer(approve=True))
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm), _request(), reviewer=reviewer)
        planner_requests = llm.requests_for("planner")
    assert [p.obj.round for p in run.of("plan_review")] == [1, 2]
    assert [p.obj.outcome for p in run.of("plan_reviewed")] == ["revising", "approved"]
    assert len(planner_requests) == 2
    revision = planner_requests[1]["messages"]
    # the planner sees its own plan as its turn and the feedback as the user's answer to it
    assert revision[-2]["role"] == "assistant" and PLANNED[0] in revision[-2]["content"]
    assert revision[-1] == {"role": "user", "content": "Also cover __slots__"}
    assert len(run.of("plan_start")) == 2


async def test_feedback_beyond_the_round_limit_proceeds_with_the_current_plan() -> None:
    reviewer = Scripted(*(PlanAnswer(feedback=f"change {i}") for i in range(5)))
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm, plan_review_max_rounds=2), _request(), reviewer=reviewer)
        planner_calls = len(llm.requests_for("planner"))
    assert [p.obj.round for p in run.of("plan_review")] == [1, 2]
    assert planner_calls == 2
    assert run.of("plan_reviewed")[-1].obj.outcome == "approved"
    assert any("limit" in p.obj.message and p.obj.recoverable for p in run.of("error"))
    assert run.stop_reason == "completed"


@pytest.mark.usefixtures("warm_litellm")  # loaded off the loop, where the virtual clock cannot see it
async def test_unanswered_review_times_out_and_proceeds_unchanged() -> None:
    async with VirtualClock() as clock, ScriptedLLM(ResearchModel(), pauses=clock) as llm:
        settings = scripted_settings(llm, plan_review_timeout_s=300)
        run = await run_engine(settings, _request(), clock=clock, reviewer=PlanInbox())
    assert [p.obj.level for p in run.of("degraded")] == ["plan_review_timeout"]
    assert run.of("plan_reviewed")[0].obj.outcome == "timeout"
    assert run.result.plan == PLANNED
    assert run.stop_reason == "completed"
    review_seq = run.of("plan_review")[0].seq
    reviewed_seq = run.of("plan_reviewed")[0].seq
    assert run.times[reviewed_seq] - run.times[review_seq] == pytest.approx(300)


class JumpClock(ScaledClock):
    """Real time plus jumps: a reviewer that "takes" hours answers at once."""

    def __init__(self) -> None:
        super().__init__(1.0)
        self.offset = 0.0

    def now(self) -> float:
        return super().now() + self.offset


class SlowReader:
    """Approves after two hours of reading, far past the run's whole time limit."""

    def __init__(self, clock: JumpClock) -> None:
        self.clock = clock

    async def review(self, steps: list[str], round: int, max_rounds: int) -> PlanAnswer:
        self.clock.offset += 7200
        return PlanAnswer(approve=True)


async def test_time_spent_waiting_for_the_review_does_not_count_against_the_time_limit() -> None:
    clock = JumpClock()
    with ScriptedLLM(ResearchModel()) as llm:
        settings = scripted_settings(llm, force_report_s=1800, report_timeout_s=300)
        run = await run_engine(settings, _request(), clock=clock, reviewer=SlowReader(clock))
    assert run.of("degraded") == []  # no force report, no deadline: the two hours were given back
    assert [p.obj.num_parallel_branches for p in run.of("top_level_branching")] == [3, 2]
    assert run.stop_reason == "completed"
    method = run.of("report")[0].obj.method
    assert method is not None
    assert method.time_budget_s == run.of("run_start")[0].obj.time_budget_s  # the budget, not budget + wait
    assert method.elapsed_s < 600  # research time only
