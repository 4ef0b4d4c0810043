"""One orchestrator cycle's research: up to the cap of agents in parallel, each in its own lane."""

from __future__ import annotations

import asyncio

from sleuth.llm.gateway import ModelAccessError
from sleuth.llm.prompting import render
from sleuth.research.lanes.agent import AgentResult, Lane, run_lane
from sleuth.research.sources import collapse_citations
from sleuth.research.state import Finding, RunState
from sleuth.research.time.deadlines import wait_all_until
from sleuth.stream.packets import Degraded, Error, Progress, SectionEnd, TopLevelBranching


def emit_progress(state: RunState) -> None:
    state.emit(
        Progress(
            processed_tasks=state.tasks_done,
            total_tasks=max(state.tasks_total, len(state.plan)),
            time_left_s=round(state.time_left(), 1),
        ),
        tab=0,
    )


async def run_lanes(state: RunState, tasks: list[str], plan_steps: list[int | None] | None = None) -> list[str]:
    """Run one agent per task in parallel; return the tool response for each task, in order.

    `plan_steps` names the plan step each task serves, so later turns know what is still uncovered."""
    steps = plan_steps or [None] * len(tasks)
    turn = state.new_turn()
    state.emit(TopLevelBranching(num_parallel_branches=len(tasks)))
    state.tasks_total += len(tasks)
    emit_progress(state)
    started = state.clock.now()
    read_before = state.registry.fetched_ids()
    lanes = [
        Lane(state=state, turn=turn, tab=tab, task=task, started_at=started, read_before=read_before)
        for tab, task in enumerate(tasks)
    ]

    async def tracked(lane: Lane) -> AgentResult:
        result = await run_lane(lane)
        state.tasks_done += 1
        emit_progress(state)
        return result

    running = [asyncio.create_task(tracked(lane), name=f"agent-{turn}-{lane.tab}") for lane in lanes]
    state.agent_tasks.update(running)
    try:
        timed_out = await wait_all_until(state.clock, state.deadlines.agent_kill_at(started), running)
    finally:
        state.agent_tasks.difference_update(running)

    finished = [task for task in running if task not in timed_out and not task.cancelled()]
    refused = [exc for task in finished if isinstance(exc := task.exception(), ModelAccessError)]
    if refused:
        raise refused[0]  # every agent's exception is retrieved above, so none is reported as lost
    results: list[AgentResult] = []
    for lane, task in zip(lanes, running, strict=False):
        if task in timed_out:
            detail = "The agent exceeded its hard time limit and was stopped."
            lane.emit(Degraded(level="agent_hard_timeout", detail=detail))
            lane.emit(Error(message="Research agent timed out.", recoverable=True))
            lane.emit(SectionEnd())
            state.tasks_done += 1
            emit_progress(state)
            results.append(
                AgentResult(task=lane.task, report="", citations=lane.citations, status="timed_out", error=detail)
            )
        else:
            results.append(task.result())

    collapsed = collapse_citations([(r.report, r.citations) for r in results], state.citations)
    responses: list[str] = []
    for lane, result, report, step in zip(lanes, results, collapsed, steps, strict=True):
        state.findings.append(
            Finding(
                task=lane.task,
                report=report.text,
                tab_index=lane.tab,
                turn_index=turn,
                status=result.status,
                plan_step=step,
            )
        )
        if result.status == "timed_out":
            responses.append(render("responses/agent_timeout", detail=result.error or ""))
        elif result.status == "failed":
            responses.append(render("responses/agent_failed", detail=result.error or "unknown error"))
        else:
            responses.append(render("responses/agent_report", report=report.text))
    return responses
