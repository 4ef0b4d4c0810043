"""`sleuth eval` end to end against the scripted OpenAI-compatible model, over the built-in corpus.

The command runs in-process (click's runner: the same entry point, without paying litellm's import
once per invocation); bad input is also checked in a real subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from sleuth.cli.main import main
from sleuth_testkit.model import ScriptedLLM, tool_names
from support.claims_model import SUPPORTED, ClaimsModel

QUESTIONS = [
    {
        "id": 1,
        "prompt": "How does the with statement use a context manager?",
        "topic": "ignored by sleuth",
        "gold_sources": ["with", "corpus://python-reference/no-such-page"],
        "key_facts": ["CONTEXT manager", ["green  cheese", "lunar"], ["not in the report", "also absent"]],
        "split": "heldout",
    },
    {"id": "q2", "prompt": "What does the with statement do?", "split": "tune"},
]


def endpoint_env(llm: ScriptedLLM) -> dict[str, str]:
    return {"SLEUTH_MODEL": "openai/any-model", "SLEUTH_API_BASE": llm.base_url, "SLEUTH_API_KEY": "sk-eval-secret"}


def sleuth_eval(args: list[str], env: dict[str, str]) -> Result:
    return CliRunner(env=env).invoke(main, ["eval", *args])


def write_questions(path: Path, questions: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_eval_writes_articles_metrics_and_summary_then_resumes(tmp_path: Path) -> None:
    questions, out = tmp_path / "questions.jsonl", tmp_path / "out"
    write_questions(questions, QUESTIONS)
    with ScriptedLLM(ClaimsModel()) as llm:
        env = endpoint_env(llm)
        done = sleuth_eval([str(questions), "--out", str(out), "--concurrency", "2"], env)
        assert done.exit_code == 0, done.output
        first_requests = len(llm.requests)

        articles = {a["id"]: a for a in lines(out / "articles.jsonl")}
        assert set(articles) == {1, "q2"}  # ids keep their JSON type, as DRB's scripts expect
        article = articles[1]
        assert article["prompt"] == QUESTIONS[0]["prompt"]
        assert article["article"].startswith(SUPPORTED)
        assert re.search(r"\n## Sources\n\n\[1\] .* — corpus://python-reference/with\n", article["article"])

        metrics = {m["id"]: m for m in lines(out / "metrics.jsonl")}
        m = metrics[1]
        assert m["gold_cited"] == 0.5 and m["gold_read"] == 0.5  # the with page, not the missing one
        assert abs(m["key_fact_recall"] - 2 / 3) < 1e-9  # case and spacing don't matter; the third is absent
        assert m["key_facts_missing"] == [["not in the report", "also absent"]]
        assert (m["sources_cited"], m["claims_checked"], m["claims_unsupported"]) == (1, 2, 1)
        flagged = [c for c in m["citations"] if not c["supported"]]
        assert {c["url"] for c in m["citations"]} == {"corpus://python-reference/with"}
        assert flagged[0]["sentence"].startswith("The moon") and "the number 3" in flagged[0]["reason"]
        assert m["stop_reason"] == "completed" and m["words"] > 20 and m["wall_s"] > 0
        assert m["input_tokens"] > 0 and m["output_tokens"] > 0
        assert metrics["q2"]["gold_cited"] is None and metrics["q2"]["key_fact_recall"] is None
        assert (m["split"], metrics["q2"]["split"]) == ("heldout", "tune")
        assert m["confidence"] in ("high", "medium", "low") and m["confidence_reason"]

        summary = json.loads((out / "summary.json").read_text())
        assert summary["questions"] == 2 and summary["stop_reasons"] == {"completed": 2}
        assert summary["means"]["gold_cited"] == 0.5  # only the question with gold sources counts
        assert summary["means"]["claims_unsupported"] == 1.0 and summary["unsupported_claim_rate"] == 0.5
        assert "mean key_fact_recall" in done.stdout and "2/2" in done.stderr
        assert summary["splits"]["heldout"] == {"questions": 1, "gold_cited": 0.5, "gold_read": 0.5,
                                                "key_fact_recall": round(m["key_fact_recall"], 4)}  # fmt: skip
        assert summary["splits"]["tune"]["questions"] == 1 and "heldout key_fact_recall" in done.stdout
        assert sum(level["reports"] for level in summary["calibration"].values()) == 2
        assert f"confidence {m['confidence']}" in done.stdout
        written = "".join(p.read_text() for p in out.iterdir())
        assert "sk-eval-secret" not in written + done.output

        # The same command again: nothing is researched twice, nothing written is lost.
        before = (out / "articles.jsonl").read_bytes()
        again = sleuth_eval([str(questions), "--out", str(out)], env)
        assert again.exit_code == 0, again.output
        assert len(llm.requests) == first_requests and "2 question(s) already" in again.stderr
        assert (out / "articles.jsonl").read_bytes() == before

        # A new question is the only one researched; the file's splits count, also for lines written before.
        retuned = [{**QUESTIONS[0], "split": "tune"}, *QUESTIONS[1:]]
        write_questions(questions, [*retuned, {"id": "q3", "prompt": "When is __exit__ called?", "split": "tune"}])
        more = sleuth_eval([str(questions), "--out", str(out)], env)
        assert more.exit_code == 0, more.output
        assert (out / "articles.jsonl").read_bytes().startswith(before)
        assert [a["id"] for a in lines(out / "articles.jsonl")][2:] == ["q3"]
        summary = json.loads((out / "summary.json").read_text())
        assert summary["questions"] == 3 and list(summary["splits"]) == ["tune"]


def test_time_budget_and_sources_reach_every_run(tmp_path: Path) -> None:
    questions, out = tmp_path / "questions.jsonl", tmp_path / "out"
    write_questions(questions, QUESTIONS[:1])
    with ScriptedLLM(ClaimsModel()) as llm:
        args = [str(questions), "--out", str(out), "--time-budget", "2m", "--source", "python-reference"]
        done = sleuth_eval(args, endpoint_env(llm))
    assert done.exit_code == 0, done.output
    (m,) = lines(out / "metrics.jsonl")
    assert m["time_budget_s"] == 120 and m["sources_cited"] == 1 and m["stop_reason"] == "completed"
    unknown = sleuth_eval([str(questions), "--out", str(tmp_path / "o2"), "--source", "no-such-source"], {})
    assert unknown.exit_code == 1 and "no-such-source" in unknown.output and not (tmp_path / "o2").exists()
    bad = sleuth_eval([str(questions), "--out", str(tmp_path / "o3"), "--time-budget", "soon"], {})
    assert bad.exit_code == 2 and "--time-budget" in bad.output


def test_a_judge_scores_reports_and_gives_the_citation_verdicts(tmp_path: Path) -> None:
    questions, out = tmp_path / "questions.jsonl", tmp_path / "out"
    write_questions(questions, QUESTIONS[:1])
    with ScriptedLLM(ClaimsModel()) as llm:
        done = sleuth_eval([str(questions), "--out", str(out), "--judge", "openai/judge-model"], endpoint_env(llm))
        judge_models = {body["model"] for body in llm.requests if tool_names(body) & {"race_scores", "claim_verdicts"}}
    assert done.exit_code == 0, done.output
    assert judge_models == {"judge-model"}
    (m,) = lines(out / "metrics.jsonl")
    assert m["race"]["overall"] == 7.5 and m["race"]["depth"] == 6
    assert {c["checker"] for c in m["citations"]} == {"judge"}
    assert [c["reason"] for c in m["citations"] if not c["supported"]] == ["the page never mentions the moon"]
    assert "judge overall" in done.stdout


def test_a_bad_question_file_is_one_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "metrics.jsonl").write_text('{"id": "kept"}\n')
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "prompt": "fine"}\n{"id": 2, "prompt": \n')
    done = subprocess.run(
        [sys.executable, "-m", "sleuth", "eval", str(bad), "--out", str(out)],
        env=os.environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(f"{bad}:2: not valid JSON (Expecting value)")
    assert (out / "metrics.jsonl").read_text() == '{"id": "kept"}\n'
    assert not (out / "articles.jsonl").exists()


def test_an_unusable_judge_is_refused_before_any_research(tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    write_questions(questions, QUESTIONS[:1])
    done = sleuth_eval([str(questions), "--out", str(tmp_path / "out"), "--judge", "offline"], {})
    assert done.exit_code == 2 and "--judge" in done.output and "offline model only extracts" in done.output
    keyless = sleuth_eval([str(questions), "--out", str(tmp_path / "out"), "--judge", "anthropic/claude-3-5-haiku"], {})
    assert keyless.exit_code == 1 and "--judge anthropic/claude-3-5-haiku" in keyless.output
    assert "Traceback" not in keyless.output and not (tmp_path / "out").exists()


def test_an_unwritable_output_folder_is_one_clear_error(tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    write_questions(questions, QUESTIONS[:1])
    (tmp_path / "a-file").write_text("")
    done = sleuth_eval([str(questions), "--out", str(tmp_path / "a-file" / "out")], {})
    assert done.exit_code == 1 and "cannot write to" in done.output and "Traceback" not in done.output
