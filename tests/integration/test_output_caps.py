"""Every model output has a cap: plan, research_agent tasks, intermediate and final reports.

The scripted model ignores `max_tokens` on purpose (as a misbehaving provider would), so these
tests show the caps are enforced by Sleuth, and that each cut output says so with a packet.
"""

from __future__ import annotations

from typing import Any

from sleuth.llm.tokens import count_tokens
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Call, Reply, ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
CAPS = {"plan_max_tokens": 64, "task_max_tokens": 16, "intermediate_report_max_tokens": 64, "report_max_tokens": 256}
LONG_TASK = "descriptor protocol " + "and the attribute lookup order of data descriptors " * 40


class Overlong(ResearchModel):
    def planner(self, body: dict[str, Any]) -> Reply:
        steps = [f"{i}. Study descriptors part {i} " + "in great detail " * 10 for i in range(1, 40)]
        return Reply(text="\n".join(steps), chunk_size=40)

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        if sum(1 for m in body["messages"] if m["role"] == "assistant") == 0:
            return Reply(tool_calls=[Call("research_agent", {"task": LONG_TASK})])
        return Reply(tool_calls=[Call("generate_report", {})])

    def agent_report(self, body: dict[str, Any]) -> Reply:
        return Reply(text="Descriptors define __get__ [1]. " * 400, chunk_size=60)

    def report(self, body: dict[str, Any]) -> Reply:
        return Reply(text="Data descriptors win over instance dictionaries [1]. " * 2000, chunk_size=200)


async def test_each_overlong_output_is_cut_to_its_cap_and_says_so() -> None:
    with ScriptedLLM(Overlong()) as llm:
        run = await run_engine(scripted_settings(llm, clarify=False, **CAPS), QUESTION)
    check_invariants(run.packets)
    cut = [p.obj.detail for p in run.of("degraded") if p.obj.level == "output_cut"]
    assert [d.split(" was longer")[0] for d in cut] == [
        "The plan",
        "The research_agent task",
        "The intermediate report",
        "The final report",
    ]

    plan_text = "".join(p.obj.content for p in run.of("plan_delta"))
    assert count_tokens(plan_text) <= CAPS["plan_max_tokens"] + 20  # the stream stops within one delta of the cap
    assert 1 <= len(run.of("plan_done")[0].obj.steps) < 6

    (task,) = [p.obj.task for p in run.of("research_agent_start")]
    assert task.startswith("descriptor protocol") and count_tokens(task) <= CAPS["task_max_tokens"]

    intermediate = "".join(p.obj.content for p in run.of("intermediate_report_delta"))
    assert count_tokens(intermediate) <= CAPS["intermediate_report_max_tokens"] + 20

    streamed = "".join(p.obj.content for p in run.of("message_delta"))
    report = run.of("report")[0].obj
    assert count_tokens(streamed) <= CAPS["report_max_tokens"] + 60
    # the cap is on the model's text; the engine's method note is appended after it
    assert report.method is not None and report.markdown.endswith(report.method.text)
    assert count_tokens(report.markdown.removesuffix(report.method.text)) <= CAPS["report_max_tokens"]
    assert run.stop_reason == "completed"


async def test_outputs_within_their_caps_are_not_reported_as_cut() -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        run = await run_engine(scripted_settings(llm, clarify=False), QUESTION)
    assert [p for p in run.of("degraded") if p.obj.level == "output_cut"] == []
    assert run.stop_reason == "completed"
