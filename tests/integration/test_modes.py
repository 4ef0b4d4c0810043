"""Light and heavy on the same question, through the scripted model: light does about half the work."""

from __future__ import annotations

from typing import Any

from sleuth.stream.results import ResearchRequest
from sleuth_testkit.engine import Run, run_engine, scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import SixStepModel
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def tokens(run: Run) -> int:
    return sum(p.obj.input_tokens + p.obj.output_tokens for p in run.of("usage"))  # type: ignore[union-attr]


async def run_mode(mode: str) -> tuple[Run, list[dict[str, Any]]]:
    with ScriptedLLM(SixStepModel()) as llm:
        run = await run_engine(scripted_settings(llm), ResearchRequest(question=QUESTION, mode=mode, clarify=False))  # type: ignore[arg-type]
        return run, list(llm.requests)


async def test_light_makes_about_half_of_heavys_model_calls_and_tokens() -> None:
    light, light_requests = await run_mode("light")
    heavy, heavy_requests = await run_mode("heavy")
    for run in (light, heavy):
        check_invariants(run.packets)
        assert run.stop_reason == "completed" and run.of("report")[0].obj.sources
    assert len(light_requests) <= 0.55 * len(heavy_requests), (len(light_requests), len(heavy_requests))
    assert len(light.of("usage")) == len(light_requests)
    assert tokens(light) <= 0.55 * tokens(heavy)
    # light: a three-step plan, one round of three agents, no second orchestrator turn
    assert len(light.of("plan_done")[0].obj.steps) == 3 and len(heavy.of("plan_done")[0].obj.steps) == 6
    assert [p.obj.num_parallel_branches for p in light.of("top_level_branching")] == [3]
    assert [p.obj.num_parallel_branches for p in heavy.of("top_level_branching")] == [3, 3]
    assert sum(1 for r in light_requests if "research_agent" in str(r.get("tools"))) == 1


async def test_light_refuses_agents_beyond_one_per_plan_step() -> None:
    model = SixStepModel(use_think=False)  # a thinking turn of its own would be one more orchestrator call
    model.tasks_per_cycle = [["descriptor protocol", "__getattr__ fallback"], ["property", "__slots__"]]
    with ScriptedLLM(model) as llm:
        run = await run_engine(scripted_settings(llm), ResearchRequest(question=QUESTION, mode="light", clarify=False))
        orchestrator_turns = len(llm.requests_for("orchestrator"))
    check_invariants(run.packets)
    # the plan had 3 steps, so 3 agents in all: the second turn's extra call is not run ...
    assert [p.obj.num_parallel_branches for p in run.of("top_level_branching")] == [2, 1]
    assert [p.obj.task for p in run.of("research_agent_start")] == [
        "descriptor protocol",
        "__getattr__ fallback",
        "property",
    ]
    # ... and with the agents spent, the report is written without asking the orchestrator again
    assert orchestrator_turns == 2 and run.of("report")
