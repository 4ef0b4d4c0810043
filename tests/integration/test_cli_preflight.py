"""The CLI refuses a run that cannot work before any packet, takes a time budget, and `sleuth doctor`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sleuth.stream.packets import parse_packet
from sleuth_testkit.model import Reply, ScriptedLLM, classify
from sleuth_testkit.oidc_provider import MockProvider
from sleuth_testkit.scenarios import ResearchModel
from support.cli import sleuth

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def endpoint_env(llm: ScriptedLLM) -> dict[str, str]:
    return {"SLEUTH_MODEL": "openai/any-model", "SLEUTH_API_BASE": llm.base_url, "SLEUTH_API_KEY": "sk-cli-secret"}


def test_a_missing_corpus_is_refused_before_any_packet(tmp_path: Path) -> None:
    done = sleuth(["research", "--json", "--no-clarify", QUESTION], {"SLEUTH_CORPUS": "/nonexistent"}, tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""  # not one packet
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "SLEUTH_CORPUS='/nonexistent'" in lines[0]


def test_a_model_without_its_key_is_refused_before_any_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model check needs litellm, which the CLI loads while the run sends `run_start`: a model
    # without its key ends the run right after it, with one line saying why and nothing else.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    env = {"SLEUTH_MODEL": "openai/gpt-4o-mini"}
    done = sleuth(["research", "--no-clarify", QUESTION], env, tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("sleuth: research failed: ") and "OPENAI_API_KEY" in lines[-1]
    assert done.stderr.count("OPENAI_API_KEY") == 1
    as_json = sleuth(["research", "--json", "--no-clarify", QUESTION], env, tmp_path)
    types = [parse_packet(line).obj.type for line in as_json.stdout.splitlines()]
    assert as_json.returncode == 1 and types[0] == "run_start" and types[-2:] == ["summary", "stop"]
    assert "error" in types and not {"plan_start", "message_start"} & set(types)


def test_a_refused_model_ends_the_run_with_one_line_not_three(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body: Reply(status=401, error_message="invalid api key")) as llm:
        done = sleuth(["research", "--no-clarify", QUESTION], endpoint_env(llm), tmp_path)
        requests = len(llm.requests)
    assert done.returncode == 1 and requests == 1
    assert done.stderr.count("authentication failed") == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("sleuth: research failed: The model openai/any-model")


def test_time_budget_reaches_run_start_and_the_progress_lines(tmp_path: Path) -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        as_json = sleuth(
            ["research", "--json", "--no-clarify", "--time-budget", "90s", QUESTION], endpoint_env(llm), tmp_path
        )
        human = sleuth(["research", "--no-clarify", "--time-budget", "1h", QUESTION], endpoint_env(llm), tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    start = parse_packet(as_json.stdout.splitlines()[0]).obj
    assert start.type == "run_start" and start.time_budget_s == 90
    assert human.returncode == 0, human.stderr
    assert "budget 1h" in human.stderr
    assert "Research cycle 1: 3 agents in parallel · 59m" in human.stderr  # time left, counted down


def test_bad_time_budgets_are_usage_errors(tmp_path: Path) -> None:
    for value, message in [("5x", "not a duration"), ("25h", "between 10s and 24h")]:
        done = sleuth(["research", "--time-budget", value, QUESTION], {}, tmp_path)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_doctor_passes_on_the_offline_defaults(tmp_path: Path) -> None:
    done = sleuth(["doctor"], {}, tmp_path)
    assert done.returncode == 0, done.stdout
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 5 and all(line.startswith("✓ ") for line in lines)
    assert any(line.startswith("✓ model offline") for line in lines)


def test_doctor_shows_the_engine_processes_and_refuses_a_bad_count(tmp_path: Path) -> None:
    three = sleuth(["doctor"], {"SLEUTH_ENGINE_PROCESSES": "3"}, tmp_path)
    inside = sleuth(["doctor"], {"SLEUTH_ENGINE_PROCESSES": "0"}, tmp_path)
    negative = sleuth(["doctor"], {"SLEUTH_ENGINE_PROCESSES": "-1"}, tmp_path)
    server_line = "✓ server: 3 engine processes (SLEUTH_ENGINE_PROCESSES)"
    assert any(line.startswith(server_line) for line in three.stdout.splitlines())
    inside_line = "✓ server: the engine inside the server's process (SLEUTH_ENGINE_PROCESSES)"
    assert any(line.startswith(inside_line) for line in inside.stdout.splitlines())
    assert negative.returncode == 1 and "Traceback" not in negative.stdout + negative.stderr
    assert "invalid setting SLEUTH_ENGINE_PROCESSES: Input should be greater than or equal to 0" in negative.stdout


def test_doctor_marks_each_failing_check_and_exits_non_zero(tmp_path: Path) -> None:
    env = {"SLEUTH_CORPUS": "/nonexistent", "SLEUTH_SEARCH": "local,tavily", "SLEUTH_MODEL": "gpt-nonsense-9"}
    done = sleuth(["doctor", "--probe"], env, tmp_path)
    assert done.returncode == 1
    failed = [line for line in done.stdout.splitlines() if line.startswith("✗ ")]
    assert any("unknown model 'gpt-nonsense-9'" in line for line in failed)
    assert any("SLEUTH_TAVILY_API_KEY" in line for line in failed)
    assert any("SLEUTH_CORPUS" in line for line in failed)
    assert any(line.startswith("✓ search local") for line in done.stdout.splitlines())


def test_doctor_probe_makes_one_tiny_call_per_model(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Reply:
        seen.append(body)
        return Reply(text="OK")

    with ScriptedLLM(respond) as llm:
        env = {**endpoint_env(llm), "SLEUTH_REPORT_MODEL": "openai/report-model"}
        done = sleuth(["doctor", "--probe"], env, tmp_path)
    assert done.returncode == 0, done.stdout
    assert sorted(body["model"] for body in seen) == ["any-model", "report-model"]
    assert all(body["max_tokens"] <= 8 and classify(body) == "report" for body in seen)
    assert "✓ probe openai/any-model: answered in" in done.stdout


def test_doctor_probe_reports_a_refused_model(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body: Reply(status=404, error_message="no such model")) as llm:
        done = sleuth(["doctor", "--probe"], endpoint_env(llm), tmp_path)
        requests = len(llm.requests)
    assert done.returncode == 1 and requests == 1
    assert "✗ probe openai/any-model: the model openai/any-model cannot be used: model not found" in done.stdout


def test_doctor_reads_the_single_sign_on_provider_and_names_the_redirect_uri(tmp_path: Path) -> None:
    with MockProvider() as provider:
        env = {
            "SLEUTH_AUTH": "accounts",
            "SLEUTH_OIDC_ISSUER": provider.issuer,
            "SLEUTH_OIDC_CLIENT_ID": provider.client_id,
            "SLEUTH_OIDC_CLIENT_SECRET": provider.client_secret,
            "SLEUTH_PUBLIC_URL": "https://sleuth.example.org/",
        }
        done = sleuth(["doctor"], env, tmp_path)
        assert done.returncode == 0, done.stdout
        assert (
            f"✓ single sign-on: {provider.issuer} answers; register the redirect URI "
            "https://sleuth.example.org/api/auth/oidc/callback there"
        ) in done.stdout
        assert provider.client_secret not in done.stdout
    gone = sleuth(["doctor"], env, tmp_path)  # the provider has stopped
    assert gone.returncode == 1
    assert f"✗ single sign-on: the sign-in provider cannot be reached at {provider.issuer}" in gone.stdout
