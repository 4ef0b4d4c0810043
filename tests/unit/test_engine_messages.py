"""Every server <-> engine message crosses the engine's pipe whole: same type, same fields."""

from __future__ import annotations

import multiprocessing
from typing import get_args

import pytest

from sleuth.research.planning.review import PlanAnswer
from sleuth.runs.messages import (
    AnswerPlan,
    CancelRun,
    Command,
    McpStates,
    Ready,
    Reply,
    RunDone,
    Shutdown,
    StartRun,
    ToolRead,
)
from sleuth.store.packet_writer import StoredPacket
from sleuth.stream.results import ResearchRequest, ResearchResult, ToolDocument
from sleuth.tools.mcp.hub import ServerState

RESULT = ResearchResult(
    status="completed",
    stop_reason="completed",
    question="Why?",
    markdown="Because [1].",
    tool_documents=[ToolDocument(id="d_1", url="mcp://notes/read?args=ab12", title="notes · read", text="Because.")],
)

MESSAGES: list[Command | Reply] = [
    StartRun("r_1", ResearchRequest(question="Why?", session_id="s_1", mode="heavy", sources=["python"])),
    CancelRun("r_1"),
    AnswerPlan("r_1", PlanAnswer(steps=("one", "two"))),
    AnswerPlan("r_1", PlanAnswer(feedback="shorter")),
    Shutdown(),
    Ready(),
    StoredPacket("r_1", 3, "message_delta", 1.7e9, '{"seq": 3}'),
    RunDone("r_1", RESULT.model_dump_json(), None, False, "completed"),
    RunDone("r_1", None, "RuntimeError: boom", False, "error"),
    RunDone("r_1", None, None, True, None),
    McpStates(
        (ServerState("notes", "ready", "", 3), ServerState("tracker", "unavailable", "did not start within 1 s"))
    ),
    ToolRead("r_1", RESULT.tool_documents[0]),
]


def test_every_message_kind_is_covered() -> None:
    kinds = {*get_args(Command), *get_args(Reply)}
    assert {type(message) for message in MESSAGES} == kinds


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_a_message_crosses_the_engine_pipe_unchanged(message: Command | Reply) -> None:
    parent, child = multiprocessing.get_context("spawn").Pipe(duplex=True)  # as EngineProcess makes it
    try:
        parent.send(message)
        received = child.recv()
    finally:
        parent.close()
        child.close()
    assert type(received) is type(message) and received == message


def test_a_finished_run_carries_its_result() -> None:
    done = RunDone("r_1", RESULT.model_dump_json(), None, False, "completed")
    assert done.result() == RESULT
    assert RunDone("r_1", None, "boom", False, "error").result() is None
