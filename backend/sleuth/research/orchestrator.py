"""The orchestrator loop: each cycle one model turn whose mock-tool calls drive the research."""

from __future__ import annotations

from typing import Any, Literal

from sleuth.llm.gateway import LLMError
from sleuth.llm.types import ToolCall
from sleuth.prompting import render
from sleuth.research import tool_schemas as ts
from sleuth.research.deadlines import DeadlineReached, run_until
from sleuth.research.lanes import run_lanes
from sleuth.research.llm_step import llm_step
from sleuth.research.output_cap import OutputCap
from sleuth.research.reasoning import Place, ReasoningRelay
from sleuth.research.state import RunState
from sleuth.stream.packets import Degraded, Error

Outcome = Literal["report", "error"]


def _force_report(state: RunState) -> None:
    state.emit(
        Degraded(
            level="orchestrator_force_report",
            detail="Research time is up; writing the report from the findings so far.",
        )
    )


def _answer_calls(state: RunState, calls: list[ToolCall]) -> tuple[dict[str, str], list[ToolCall], bool]:
    """Immediate answers for every call that is not a research agent to run; the agents to run; report?"""
    answers: dict[str, str] = {}
    agents: list[ToolCall] = []
    wants_report = False
    position = 0
    for call in calls:
        if not call.ok:
            answers[call.id] = call.error or "Invalid tool call."
        elif call.resolved_name == ts.RESEARCH_AGENT:
            position += 1
            task = str((call.parsed or {}).get("task", "")).strip()
            if not task:
                answers[call.id] = "'research_agent' needs a non-empty 'task'."
            elif len(agents) >= state.lanes:
                # the cap is enforced here, not left to the prompt
                answers[call.id] = render("responses/agent_refused", cap=state.lanes, position=position)
            else:
                agents.append(call)
        elif call.resolved_name == ts.THINK_TOOL:
            answers[call.id] = render("responses/think_ack")
        elif call.resolved_name == ts.GENERATE_REPORT:
            wants_report = True
            answers[call.id] = render("responses/generate_report_ack")
        else:
            answers[call.id] = render(
                "responses/tool_unavailable", name=call.name, available="research_agent, generate_report"
            )
    return answers, agents, wants_report


async def orchestrate(state: RunState) -> Outcome:
    """Run cycles until the model asks for the report, the cycles run out, or time is up."""
    with_think = not state.reasoning_model
    tools = ts.orchestrator_tools(with_think)
    names = [tool["function"]["name"] for tool in tools]
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
            ),
        },
        {
            "role": "user",
            "content": render("orchestrator_user", question=request.question, clarification=request.clarification),
        },
    ]

    def reasoning_block() -> Place:
        return (state.new_turn(), 0, None)

    for cycle in range(state.max_cycles):
        if state.clock.now() >= state.deadlines.force_report_at:
            _force_report(state)
            break
        if cycle == 1:
            messages.append({"role": "user", "content": render("orchestrator_reminder")})
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
        if agents:
            responses = await run_lanes(state, [_task(state, call) for call in agents])
            answers.update({call.id: response for call, response in zip(agents, responses, strict=False)})
        messages.append(result.assistant_message())
        messages.extend({"role": "tool", "tool_call_id": c.id, "content": answers[c.id]} for c in result.tool_calls)
        if wants_report:
            break
    return "report"


def _task(state: RunState, call: ToolCall) -> str:
    """The call's task, cut to `task_max_tokens` (an agent's whole brief should not be a page)."""
    cap = OutputCap("research_agent task", state.settings.task_max_tokens)
    task = cap.keep(str((call.parsed or {})["task"]).strip())
    if cap.cut:
        state.emit(cap.degraded())
    return task
