"""Credentials, permission and unknown-model errors: never retried, one clear message, the run ends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM, classify
from sleuth_testkit.scenarios import ResearchModel
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


class RefusedAt(ResearchModel):
    """Answers normally until the step `step`, which the provider refuses with `status`."""

    def __init__(self, step: str, status: int) -> None:
        super().__init__()
        self.step = step
        self.status = status

    def __call__(self, body: dict[str, Any]) -> Reply:
        if classify(body) == self.step:
            return Reply(status=self.status, error_message=f"refused with {self.status} for key sk-test-secret")
        return super().__call__(body)


@pytest.mark.parametrize(
    ("status", "problem"), [(401, "authentication failed"), (403, "permission denied"), (404, "model not found")]
)
async def test_access_errors_are_not_retried_and_end_the_run_with_one_message(status: int, problem: str) -> None:
    with ScriptedLLM(RefusedAt("clarifier", status)) as llm:
        run = await run_engine(scripted_settings(llm, llm_retries=4), QUESTION)
        requests = len(llm.requests)
    assert requests == 1  # one try, no retry
    check_invariants(run.packets)
    assert run.stop_reason == "error" and run.result.status == "error"
    errors = [p.obj for p in run.of("error")]
    assert len(errors) == 1 and not errors[0].recoverable
    assert problem in errors[0].message and "openai/scripted" in errors[0].message
    assert "Traceback" not in errors[0].message and "Internal error" not in errors[0].message
    assert "sk-test-secret" not in json.dumps([p.model_dump() for p in run.packets])


async def test_an_agent_refused_mid_run_ends_the_run_instead_of_each_lane_failing_alone() -> None:
    with ScriptedLLM(RefusedAt("agent", 401)) as llm:
        run = await run_engine(scripted_settings(llm), QUESTION)
        agent_requests = len(llm.requests_for("agent"))
        report_requests = len(llm.requests_for("report"))
    check_invariants(run.packets)
    assert agent_requests == 3  # one per lane, none retried
    assert report_requests == 0  # the report would be refused too: not attempted
    assert run.stop_reason == "error"
    assert [p.obj.recoverable for p in run.of("error")] == [False]


async def test_a_missing_key_is_an_authentication_problem_found_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedLLM(ResearchModel()) as llm:
        # the OpenAI client refuses to send without a key; litellm reports that as a (retryable) 500
        settings = scripted_settings(llm, api_key=None, llm_retries=4)
        run = await run_engine(settings, QUESTION)
        requests = len(llm.requests)
    assert requests == 0
    assert run.stop_reason == "error"
    errors = [p.obj.message for p in run.of("error")]
    assert len(errors) == 1 and "missing credentials" in errors[0].lower()
