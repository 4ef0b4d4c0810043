"""`sleuth eval` end to end against the scripted OpenAI-compatible model, over the built-in corpus.

The command runs in-process (click's runner: the same entry point, without paying litellm's import
once per invocation); bad input is also checked in a real subprocess.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from sleuth.cli import main
from support.scenarios import ResearchModel, assistant_turns, last_tool_texts, sources_in
from support.scripted_llm import Call, Reply, ScriptedLLM, tool_names, user_text
from test_cli_research import endpoint_env, sleuth

SUPPORTED = (
    'The "with" statement is used to wrap the execution of a block with methods defined by a context manager [1].'
)
UNSUPPORTED = "The moon is made of green cheese and orbits Mars every 3 days [1]."

QUESTIONS = [
    {
        "id": 1,
        "prompt": "How does the with statement use a context manager?",
        "topic": "ignored by sleuth",
        "gold_sources": ["with", "corpus://python-reference/no-such-page"],
        "key_facts": ["CONTEXT manager", ["green  cheese", "lunar"], ["not in the report", "also absent"]],
    },
    {"id": "q2", "prompt": "What does the with statement do?"},
]


class EvalModel(ResearchModel):
    """Researches the `with` page; the report has one sentence copied from it and one it never says."""

    def __init__(self) -> None:
        super().__init__(tasks_per_cycle=[["with statement context manager"]])

    def __call__(self, body: dict[str, Any]) -> Reply:
        names = tool_names(body)
        if names == {"race_scores"}:
            scores = {"comprehensiveness": 8, "depth": 6, "instruction_following": 7, "readability": 9}
            return Reply(tool_calls=[Call("race_scores", {**scores, "justification": "Fine."})])
        if names == {"claim_verdicts"}:
            claims = re.findall(r"^Claim (\d+) — marker \[\d+\]\nSentence: (.*)$", user_text(body), re.M)
            verdicts = [
                {"claim": int(n), "supported": "moon" not in s, "reason": "the page never mentions the moon"}
                for n, s in claims
            ]
            return Reply(tool_calls=[Call("claim_verdicts", {"verdicts": verdicts})])
        return super().__call__(body)

    def planner(self, body: dict[str, Any]) -> Reply:
        return Reply(text="1. What the with statement does with a context manager")

    def agent(self, body: dict[str, Any]) -> Reply:
        turn = assistant_turns(body)
        if turn == 0:
            return Reply(tool_calls=[Call("search", {"queries": ["with statement context manager"]})])
        if turn == 1:
            found = [url for text in last_tool_texts(body) for _, _, url in sources_in(text)]
            return Reply(tool_calls=[Call("open_url", {"urls": [u for u in found if u.endswith("/with")][:1]})])
        return Reply(tool_calls=[Call("generate_report", {})])

    def agent_report(self, body: dict[str, Any]) -> Reply:
        number = next(n for n, _, url in sources_in(user_text(body)) if url.endswith("/with"))
        return Reply(text=f"The with statement wraps a block in a context manager's methods [{number}].")

    def report(self, body: dict[str, Any]) -> Reply:
        return Reply(text=f"{SUPPORTED} {UNSUPPORTED}\n\n## Details\n\nSee the sources.")


def sleuth_eval(args: list[str], env: dict[str, str]) -> Result:
    return CliRunner(env=env).invoke(main, ["eval", *args])


def write_questions(path: Path, questions: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_eval_writes_articles_metrics_and_summary_then_resumes(tmp_path: Path) -> None:
    questions, out = tmp_path / "questions.jsonl", tmp_path / "out"
    write_questions(questions, QUESTIONS)
    with ScriptedLLM(EvalModel()) as llm:
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
        assert flagged[0]["sentence"].startswith("The moon") and "key words" in flagged[0]["reason"]
        assert m["stop_reason"] == "completed" and m["words"] > 20 and m["wall_s"] > 0
        assert m["input_tokens"] > 0 and m["output_tokens"] > 0
        assert metrics["q2"]["gold_cited"] is None and metrics["q2"]["key_fact_recall"] is None

        summary = json.loads((out / "summary.json").read_text())
        assert summary["questions"] == 2 and summary["stop_reasons"] == {"completed": 2}
        assert summary["means"]["gold_cited"] == 0.5  # only the question with gold sources counts
        assert summary["means"]["claims_unsupported"] == 1.0 and summary["unsupported_claim_rate"] == 0.5
        assert "mean key_fact_recall" in done.stdout and "2/2" in done.stderr

        # The same command again: nothing is researched twice, nothing written is lost.
        before = (out / "articles.jsonl").read_bytes()
        again = sleuth_eval([str(questions), "--out", str(out)], env)
        assert again.exit_code == 0, again.output
        assert len(llm.requests) == first_requests and "2 question(s) already" in again.stderr
        assert (out / "articles.jsonl").read_bytes() == before

        # A new question is the only one researched.
        write_questions(questions, [*QUESTIONS, {"id": "q3", "prompt": "When is __exit__ called?"}])
        more = sleuth_eval([str(questions), "--out", str(out)], env)
        assert more.exit_code == 0, more.output
        assert (out / "articles.jsonl").read_bytes().startswith(before)
        assert [a["id"] for a in lines(out / "articles.jsonl")][2:] == ["q3"]
        assert json.loads((out / "summary.json").read_text())["questions"] == 3


def test_a_judge_scores_reports_and_gives_the_citation_verdicts(tmp_path: Path) -> None:
    questions, out = tmp_path / "questions.jsonl", tmp_path / "out"
    write_questions(questions, QUESTIONS[:1])
    with ScriptedLLM(EvalModel()) as llm:
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
    done = sleuth(["eval", str(bad), "--out", str(out)], {}, tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(f"{bad}:2: not valid JSON (Expecting value)")
    assert (out / "metrics.jsonl").read_text() == '{"id": "kept"}\n'
    assert not (out / "articles.jsonl").exists()
