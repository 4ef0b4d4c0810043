"""`sleuth research` against an OpenAI-compatible endpoint: in this process, and as a user runs it, a
subprocess (a full run's stdout, and the exit codes of refused input)."""

from __future__ import annotations

from pathlib import Path

from sleuth.stream.packets import parse_packet
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.cli import sleuth, sleuth_subprocess
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


def endpoint_env(llm: ScriptedLLM) -> dict[str, str]:
    return {"SLEUTH_MODEL": "openai/any-model", "SLEUTH_API_BASE": llm.base_url, "SLEUTH_API_KEY": "sk-cli-secret"}


def test_json_mode_prints_only_valid_packets(tmp_path: Path) -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        done = sleuth_subprocess(["research", "--json", "--no-clarify", QUESTION], endpoint_env(llm), tmp_path)
    assert done.returncode == 0, done.stderr
    packets = [parse_packet(line) for line in done.stdout.splitlines()]
    check_invariants(packets)
    assert packets[-1].obj.reason == "completed"
    assert "sk-cli-secret" not in done.stdout + done.stderr


def test_human_mode_shows_progress_and_prints_the_report_with_sources(tmp_path: Path) -> None:
    with ScriptedLLM(ResearchModel()) as llm:
        done = sleuth(["research", "--no-clarify", "--mode", "light", QUESTION], endpoint_env(llm), tmp_path)
    assert done.returncode == 0, done.stderr
    # light: one round of agents, one per plan step, in parallel
    assert "Plan:" in done.stderr and "[lane 3]" in done.stderr and "Research cycle 2" not in done.stderr
    assert "Descriptors take precedence" in done.stdout
    assert "\nSources:\n[1] " in done.stdout and "corpus://python-reference/" in done.stdout
    # the artifact leads: question, title, summary, key findings; the engine's method note ends the body
    assert done.stdout.startswith(f"# {QUESTION}\n\n**Descriptors and \\_\\_getattr\\_\\_**\n")  # markdown-escaped
    assert "\n## Key findings\n\n- Finding backed by source" in done.stdout
    assert done.stdout.index("## How this report was made") < done.stdout.index("\nSources:\n")


def test_clarification_without_a_terminal_prints_the_questions_and_exits_zero(tmp_path: Path) -> None:
    model = ResearchModel(clarify_questions="1. Which Python version?\n2. Which implementation?")
    with ScriptedLLM(model) as llm:
        done = sleuth(["research", "descriptors?"], endpoint_env(llm), tmp_path)
    assert done.returncode == 0
    assert "1. Which Python version?" in done.stderr and "Sources:" not in done.stdout


def test_a_failing_endpoint_exits_non_zero_with_one_line(tmp_path: Path) -> None:
    env = {
        "SLEUTH_MODEL": "openai/any-model",
        "SLEUTH_API_BASE": "http://127.0.0.1:9/v1",
        "SLEUTH_API_KEY": "sk-x",
        "SLEUTH_LLM_RETRIES": "0",
    }
    done = sleuth(["research", "--no-clarify", QUESTION], env, tmp_path)
    assert done.returncode == 1
    assert "research failed" in done.stderr and "Traceback" not in done.stderr


def test_bad_settings_and_empty_questions_are_clear_errors(tmp_path: Path) -> None:
    bad = sleuth_subprocess(["research", QUESTION], {"SLEUTH_MAX_PARALLEL_AGENTS": "9"}, tmp_path)
    assert bad.returncode != 0 and "SLEUTH_MAX_PARALLEL_AGENTS" in bad.stderr and "Traceback" not in bad.stderr
    empty = sleuth(["research", "  "], {}, tmp_path)
    assert empty.returncode == 2 and "question is empty" in empty.stderr
    unknown = sleuth(["research", QUESTION], {"SLEUTH_SEARCH": "altavista"}, tmp_path)
    assert unknown.returncode != 0 and "altavista" in unknown.stderr and "Traceback" not in unknown.stderr


def test_answer_option_answers_the_clarifying_questions_and_researches(tmp_path: Path) -> None:
    model = ResearchModel(clarify_questions="1. Which Python version?\n2. Which implementation?")
    with ScriptedLLM(model) as llm:
        done = sleuth(["research", "--json", "descriptors?", "--answer", "3.12, CPython"], endpoint_env(llm), tmp_path)
        planner_saw = [b for b in llm.requests if "3.12, CPython" in str(b["messages"])]
    assert done.returncode == 0, done.stderr
    packets = [parse_packet(line) for line in done.stdout.splitlines()]
    stops = [p.obj.reason for p in packets if p.obj.type == "stop"]
    assert stops == ["clarification", "completed"]  # two runs, each ending with its own stop
    check_invariants([p for p in packets if p.run_id == packets[-1].run_id])
    assert planner_saw


def test_a_question_or_answer_over_the_servers_limit_is_refused_with_its_message(tmp_path: Path) -> None:
    """The CLI applies the server's SLEUTH_MAX_MESSAGE_CHARS (20,000) with the API's 413 message."""
    with ScriptedLLM(ResearchModel()) as llm:
        env = endpoint_env(llm)
        question = sleuth(["research", "--json", "--no-clarify", "x" * 50_000], env, tmp_path)
        answer = sleuth(["research", "--json", QUESTION, "--answer", "y" * 20_001], env, tmp_path)
        lowered = sleuth(["research", "--json", "z" * 101], {**env, "SLEUTH_MAX_MESSAGE_CHARS": "100"}, tmp_path)
    assert question.returncode == 1 and "message is 50000 characters; the limit is 20000" in question.stderr
    assert answer.returncode == 1 and "message is 20001 characters; the limit is 20000" in answer.stderr
    assert lowered.returncode == 1 and "message is 101 characters; the limit is 100" in lowered.stderr
    assert question.stdout == answer.stdout == lowered.stdout == ""  # no run started: not even run_start
    assert llm.requests == []
    assert "Traceback" not in question.stderr + answer.stderr + lowered.stderr
