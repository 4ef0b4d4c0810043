"""The orchestrator loop: each cycle one model turn whose mock-tool calls drive the research."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sleuth.core.clock import DeadlineReached, run_until
from sleuth.llm.gateway import LLMError
from sleuth.llm.prompting import render
from sleuth.llm.types import ToolCall
from sleuth.research import tool_schemas as ts
from sleuth.research.lanes.lanes import run_lanes
from sleuth.research.lanes.reasoning import Place, ReasoningRelay
from sleuth.research.lanes.turns import coverage, plan_step_of
from sleuth.research.state import RunState
from sleuth.research.step import OutputCap, llm_step
from sleuth.stream.packets import Degraded, Error

Outcome = Literal["report", "error"]


def _force_report(
    state: RunState, detail: str = "Research time is up; writing the report from the findings so far."
) -> None:
    state.emit(Degraded(level="orchestrator_force_report", detail=detail))


NO_ROOM = "Too little time is left for another round of research; writing the report from the findings so far."


@dataclass
class Dispatch:
    """A `research_agent` call that will run."""

    call: ToolCall
    task: str
    plan_step: int | None


def _answer_calls(state: RunState, calls: list[ToolCall]) -> tuple[dict[str, str], list[Dispatch], bool]:
    """Immediate answers for every call that is not a research agent to run; the agents to run; report?"""
    answers: dict[str, str] = {}
    agents: list[Dispatch] = []
    wants_report = False
    position = 0
    # thinking is for between rounds: a turn that thinks and dispatches gets its thinking only
    thinks = any(call.ok and call.resolved_name == ts.THINK_TOOL for call in calls)
    for call in calls:
        if not call.ok:
            answers[call.id] = call.error or "Invalid tool call."
        elif call.resolved_name == ts.RESEARCH_AGENT:
            position += 1
            arguments = call.parsed or {}
            task = _task(state, arguments)
            if not task:
                answers[call.id] = "'research_agent' needs a non-empty 'task'."
            elif thinks:
                answers[call.id] = render("responses/think_alone")
            elif len(agents) >= state.lanes:
                # the cap is enforced here, not left to the prompt
                answers[call.id] = render("responses/agent_refused", cap=state.lanes, position=position)
            elif (left := state.agents_left) is not None and len(agents) >= left:
                answers[call.id] = render("responses/agent_limit", cap=state.limits.max_agents)
            else:
                agents.append(Dispatch(call, task, plan_step_of(task, arguments.get("plan_step"), state.plan)))
        elif call.resolved_name == ts.THINK_TOOL:
            answers[call.id] = render("responses/think_ack")
        elif call.resolved_name == ts.GENERATE_REPORT:
            wants_report = True
            answers[call.id] = render("responses/generate_report_ack")
        else:
            answers[call.id] = render(
                "responses/tool_unavailable", name=call.name, available=", ".join(_tool_names(state))
            )
    return answers, agents, wants_report


def _tool_names(state: RunState) -> list[str]:
    return [tool["function"]["name"] for tool in ts.orchestrator_tools(not state.reasoning_model)]


def _turn_message(state: RunState, cycle: int) -> str:
    """What the model is told at the start of every cycle: where it stands (1-based cycle)."""
    uncovered, attempts = coverage(state.plan, state.findings)
    return render(
        "orchestrator_turn",
        cycle=cycle,
        max_cycles=state.max_cycles,
        time_left_s=round(state.deadlines.research_time_left(state.clock.now()), 1),
        plan=state.plan,
        uncovered=uncovered,
        attempts=attempts,
        reminder=render("orchestrator_reminder") if cycle == 2 else "",
    )


async def orchestrate(state: RunState) -> Outcome:
    """Run cycles until the model asks for the report, the cycles run out, or time is up."""
    with_think = not state.reasoning_model
    tools = ts.orchestrator_tools(with_think)
    names = _tool_names(state)
    request = state.request
    messages: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": render(
                "orchestrator",
                today=state.today,
                plan=state.plan,
                max_parallel=state.lanes,
                think_tool=with_think,
                max_cycles=state.max_cycles,
                strategy=request.strategy or state.settings.strategy,
                question=request.question,
                clarification=request.clarification,
            ),
        },
        {
            "role": "user",
            "content": render("orchestrator_user", question=request.question, clarification=request.clarification)
            + "\n\n"
            + _turn_message(state, 1),
        },
    ]

    def reasoning_block() -> Place:
        return (state.new_turn(), 0, None)

    for cycle in range(state.max_cycles):
        now = state.clock.now()
        if now >= state.deadlines.force_report_at:
            _force_report(state)
            break
        if cycle > 0 and state.agents_left == 0:
            break  # the mode's agents are spent: asking the model again could only end in the report
        if cycle > 0 and not state.deadlines.cycle_fits(now, state.pace.call_s):
            _force_report(state, NO_ROOM)
            break
        state.tally.cycles_used = cycle + 1
        if cycle > 0:
            messages.append({"role": "user", "content": _turn_message(state, cycle + 1)})
        relay = ReasoningRelay(state, names, reasoning_block)
        try:
            result = await run_until(
                state.clock,
                state.deadlines.force_report_at,
                llm_step(
                    state,
                    "orchestrator",
                    messages,
                    tools=tools,
                    tool_choice="required",
                    max_tokens=state.settings.orchestrator_max_tokens,
                    handlers=relay.handlers(),
                ),
            )
        except DeadlineReached:
            relay.finish()
            _force_report(state)
            break
        except LLMError as exc:
            relay.finish()
            state.emit(Error(message=str(exc), recoverable=cycle > 0))
            if cycle == 0:
                return "error"
            break
        relay.finish()
        if not result.tool_calls:
            if cycle == 0:
                state.emit(
                    Error(message="The orchestrator model made no tool call on its first cycle.", recoverable=False)
                )
                return "error"
            break  # a later cycle without tool calls means it is done: straight to the report
        answers, agents, wants_report = _answer_calls(state, result.tool_calls)
        if agents and not state.deadlines.agents_fit(state.clock.now(), state.pace.call_s):
            # agents that would be cancelled before reporting cost time and add nothing
            answers.update({agent.call.id: render("responses/agent_no_time") for agent in agents})
            _force_report(state, NO_ROOM)
            agents, wants_report = [], True
        if agents:
            responses = await run_lanes(state, [a.task for a in agents], [a.plan_step for a in agents])
            answers.update({agent.call.id: response for agent, response in zip(agents, responses, strict=True)})
        messages.append(result.assistant_message())
        messages.extend({"role": "tool", "tool_call_id": c.id, "content": answers[c.id]} for c in result.tool_calls)
        if wants_report:
            break
    return "report"


def _task(state: RunState, arguments: dict[str, Any]) -> str:
    """The call's task, cut to `task_max_tokens` (an agent's whole brief should not be a page)."""
    cap = OutputCap("research_agent task", state.settings.task_max_tokens)
    task = cap.keep(str(arguments.get("task", "")).strip())
    if cap.cut:
        state.emit(cap.degraded())
    return task
