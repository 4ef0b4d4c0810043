"""Every template under prompts/ renders with the variables the code really passes.

Templates use StrictUndefined, so a missing or misspelt variable raises where the code renders
it. The engine scenarios below (scripted model and offline model) run every render call site;
the test then checks that every template was rendered at least once, so none is left untried.
"""

from __future__ import annotations

from typing import Any

from sleuth.config import Settings
from sleuth.llm.gateway import LLMGateway
from sleuth.llm.prompting import observe_renders, prompts_dir, render
from sleuth.research import tool_schemas as ts
from sleuth.stream.results import ClarificationExchange, PriorReport, ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Call, Reply, ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def all_templates() -> set[str]:
    root = prompts_dir()
    return {
        str(path.relative_to(root).with_suffix(""))
        for path in root.rglob("*.j2")
        if not path.name.startswith("_")  # partials are rendered through the templates that import them
    }


class Troublesome(ResearchModel):
    """Exercises the engine's rarer answers: the cap, a failing agent, think beside dispatches,
    unknown tools in both loops, and a report model that fails."""

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turns == 0:
            return Reply(tool_calls=[Call("think_tool", {"reasoning": "first"}), Call("research_agent", {"task": "x"})])
        if turns == 1:
            tasks = ["descriptor protocol", "broken task", "__getattr__ fallback", "fourth task"]
            return Reply(tool_calls=[Call("research_agent", {"task": t}) for t in tasks])
        if turns == 2:
            return Reply(tool_calls=[Call("summon_oracle", {})])
        return Reply(tool_calls=[Call("generate_report", {})])

    def agent(self, body: dict[str, Any]) -> Reply:
        task = body["messages"][1]["content"]
        if "broken" in task:
            return Reply(status=400, error_message="invalid request for this agent")
        if sum(1 for m in body["messages"] if m["role"] == "assistant") == 0 and "fallback" in task:
            return Reply(tool_calls=[Call("read_minds", {})])
        return super().agent(body)

    def report(self, body: dict[str, Any]) -> Reply:
        return Reply(status=400, error_message="report model refuses")


class HangingAgent(ResearchModel):
    def agent(self, body: dict[str, Any]) -> Reply:
        return Reply(hang=True)

    def agent_report(self, body: dict[str, Any]) -> Reply:
        return Reply(hang=True)


class HangingOrchestrator(ResearchModel):
    def orchestrator(self, body: dict[str, Any]) -> Reply:
        return Reply(hang=True)


async def _scripted_scenarios() -> None:
    with ScriptedLLM(Troublesome(clarify_questions="1. Which version?")) as llm:
        settings = scripted_settings(llm, llm_retries=0)
        await run_engine(settings, "descriptors?")  # clarifying questions
        answered = ClarificationExchange(questions=["Which version?"], answer="3.12")
        await run_engine(settings, ResearchRequest(question="descriptors?", clarification=answered))
        assert "summon_oracle" in str(llm.requests_for("orchestrator")[-1]["messages"])
    with ScriptedLLM(HangingAgent(tasks_per_cycle=[["slow task"]])) as llm:
        # the agent is forced to report at 0.3 s, its report hangs too, so it is cut at 0.6 s
        settings = scripted_settings(llm, agent_force_report_s=0.3, agent_timeout_s=0.6, agent_report_grace_s=0)
        await run_engine(settings, ResearchRequest(question=QUESTION, clarify=False))
    with ScriptedLLM(HangingOrchestrator()) as llm:
        settings = scripted_settings(llm, force_report_s=30, deadline_s=0.5)
        await run_engine(settings, ResearchRequest(question=QUESTION, clarify=False))


async def _offline_scenarios() -> None:
    settings = Settings()
    await run_engine(settings, "asdkjh qwoeiu zxcmnb lkjqwe poiuyt")
    earlier = PriorReport(question="What are descriptors?", markdown="Descriptors define __get__ [1].")
    run = await run_engine(settings, ResearchRequest(question=QUESTION, history=[earlier]))
    assert run.stop_reason == "completed"
    gateway = LLMGateway(settings)
    # a request it cannot make sense of, and an agent whose sources say nothing about its task
    await gateway.complete("report", [{"role": "system", "content": "??"}], tool_choice="none")
    nothing_read = [
        {
            "role": "system",
            "content": render("intermediate_report", today="2025-01-01", task="x", max_tokens=200, forced=True),
        },
        {"role": "user", "content": render("intermediate_report_user", sources=[], forced=True)},
    ]
    await gateway.complete("researcher", nothing_read)
    await gateway.complete(
        "orchestrator", [{"role": "user", "content": ""}], tools=ts.orchestrator_tools(False), tool_choice="none"
    )


# Templates of features outside a research run; each renders, under the same StrictUndefined, in the
# test file named here, which drives its real code path.
ELSEWHERE = {
    **dict.fromkeys(
        [
            "audio_dialogue",
            "audio_overview",
            "audio_user",
            "offline/dialogue_ask",
            "offline/dialogue_close",
            "offline/dialogue_open",
            "offline/overview_open",
            "tools/record_dialogue",
            "tools/record_dialogue_lines",
            "tools/record_overview",
            "tools/record_overview_lines",
        ],
        "tests/api/test_audio_api.py",
    ),
    **dict.fromkeys(
        ["change_labels", "change_labels_user", "tools/label_changes", "tools/label_changes_label"],
        "tests/integration/test_schedule_labels.py",
    ),
    **dict.fromkeys(
        ["claim_judge", "claim_judge_user", "tools/claim_verdicts", "tools/claim_verdicts_reason"],
        "tests/integration/test_engine_claims.py",
    ),
    **dict.fromkeys(
        [
            "eval_race",
            "eval_race_user",
            "tools/race_scores",
            "tools/race_scores_criterion",
            "tools/race_scores_justification",
        ],
        "tests/integration/test_eval.py",
    ),
    **dict.fromkeys(
        ["followup", "followup_user", "responses/followup_not_found", "tools/decline_followup"],
        "tests/api/test_followup_api.py",
    ),
    "doctor_probe": "tests/integration/test_cli_preflight.py",
    "responses/agent_limit": "tests/integration/test_modes.py",
    "responses/agent_no_time": "tests/integration/test_time_budget.py",
    "responses/mcp_result": "tests/integration/test_mcp_runs.py",
}


def test_templates_covered_elsewhere_exist() -> None:
    assert set(ELSEWHERE) <= all_templates()


async def test_every_template_is_rendered_by_the_code_with_its_real_variables() -> None:
    with observe_renders() as seen:
        await _scripted_scenarios()
        await _offline_scenarios()
    missing = all_templates() - set(seen) - set(ELSEWHERE)
    assert not missing, f"never rendered by any scenario: {sorted(missing)}"
