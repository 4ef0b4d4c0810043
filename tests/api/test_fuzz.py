"""Fuzz every operation of the OpenAPI schema (valid and invalid inputs): never a 5xx."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from conftest import LiveServer, live_server
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM


@pytest.fixture
def fuzz_server(hanging_llm: ScriptedLLM) -> Iterator[LiveServer]:
    # Runs the fuzzer starts hang in the orchestrator, so the run limit (429) is reached too.
    with live_server(scripted_settings(hanging_llm, max_runs=4, max_message_chars=500, heartbeat_s=0.2)) as live:
        yield live


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_operation_answers_5xx(fuzz_server: LiveServer, mode: GenerationMode) -> None:
    spec = httpx.get(f"{fuzz_server.base_url}/openapi.json").json()
    schema = schemathesis.openapi.from_dict(spec)
    everything = [result.ok() for result in schema.get_all_operations()]
    assert len(everything) == 50  # every route of the API, plus GET /api/runs/{run_id}
    # A valid chat completion waits for its report, which the hanging model never gives; its
    # refusals are tested in test_openai_api.py.
    operations = [op for op in everything if op.label != "POST /v1/chat/completions"]
    assert len(operations) == 49
    strategy = st.one_of([op.as_strategy(generation_mode=mode) for op in operations])

    @settings(max_examples=250, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def check(case: schemathesis.Case) -> None:
        response = case.call(base_url=fuzz_server.base_url, timeout=10)
        assert response.status_code < 500, (
            f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}"
        )

    check()
