"""eval/claim_accuracy.py scores the claim check against hand labels (docs/evaluation.md's precision and
recall), by split and error kind, with the deterministic check or a judge model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sleuth_testkit.model import Call, Reply, ScriptedLLM, tool_names, user_text

ROOT = Path(__file__).resolve().parents[2]
WITH = "corpus://python-reference/with"
POWER = "corpus://python-reference/power"


def label(sentence: str, url: str, verdict: str, kind: str = "test", split: str = "tune") -> str:
    row = {"id": sentence[:10], "kind": kind, "sentence": sentence, "cites": {"1": url}, "marker": "[1]"}
    return json.dumps({**row, "label": verdict, "split": split})


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data folder for the module: the built-in reference is indexed into it once."""
    return tmp_path_factory.mktemp("data")


def score(labels: Path, data_dir: Path, *options: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "eval" / "claim_accuracy.py"), str(labels), "--show-errors", *options],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=labels.parent,
        env={**os.environ, "SLEUTH_EVAL_DATA_DIR": str(data_dir), **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout[done.stdout.index("{") :]), done.stdout


def test_the_script_counts_hits_misses_and_false_alarms_by_split_and_kind(tmp_path: Path, data_dir: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "\n".join(
            [
                label("The context manager's __enter__() is loaded for later use.", WITH, "supported"),
                label("The context manager's __enter__() is loaded for later use.", POWER, "unsupported", "swapped"),
                label(
                    "If __exit__() returns true, the exception is reraised after the with statement.",
                    WITH,
                    "unsupported",
                    "negation",
                    "heldout",
                ),
                label(
                    "The with statement loads the context manager's __exit__() before its __enter__().",
                    WITH,
                    "unsupported",
                    "comparison",
                    "heldout",
                ),
                label("Raising a negative number to a fractional power gives a complex number.", POWER, "supported"),
            ]
        )
    )
    report, out = score(labels, data_dir)
    # A wrong-document citation and an inverted rule caught; the swapped order missed; no false alarm.
    assert report["both"]["all"] == {
        "citations": 5,
        "labelled_unsupported": 3,
        "flagged": 2,
        "precision": 1.0,
        "recall": 0.667,
        "false_alarm_rate": 0.0,
    }
    assert report["heldout"]["negation"]["recall"] == 1.0 and report["heldout"]["comparison"]["recall"] == 0.0
    assert report["heldout"]["edits"]["recall"] == 0.5  # the kinds of planted error, together
    assert report["tune"]["swapped"]["recall"] == 1.0 and report["tune"]["all"]["false_alarm_rate"] == 0.0
    assert "missed: The with s [1]" in out and "check: supported" in out


def test_a_label_citing_an_unindexed_collection_is_one_clear_line(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(label("The heap invariant holds after every push.", "corpus://pydoc311/heapq.html", "supported"))
    done = subprocess.run(
        [sys.executable, str(ROOT / "eval" / "claim_accuracy.py"), str(labels), "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "cannot read corpus://pydoc311/heapq.html" in done.stderr and "scripts/eval" in done.stderr


def judge_rejecting(word: str) -> Any:
    """A judge model that finds no support for any claim containing `word`, and support for the rest."""

    def respond(body: dict[str, Any]) -> Reply:
        assert tool_names(body) == {"claim_verdicts"}
        claims = re.findall(r"^Claim (\d+) — marker \[\d+\]\nSentence: (.*)$", user_text(body), re.M)
        verdicts = [
            {"claim": int(n), "supported": word not in s, "reason": f"the page says nothing {word}"} for n, s in claims
        ]
        return Reply(tool_calls=[Call("claim_verdicts", {"verdicts": verdicts})])

    return respond


def test_a_judge_model_is_measured_on_the_same_labels(tmp_path: Path, data_dir: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "\n".join(
            [
                # The overlap check passes this one; the judge does not.
                label("The context manager's __enter__() is loaded for later use.", WITH, "unsupported", "entity"),
                label("Raising a negative number to a fractional power gives a complex number.", POWER, "supported"),
            ]
        )
    )
    without, _ = score(labels, data_dir)
    assert without["both"]["all"]["recall"] == 0.0
    with ScriptedLLM(judge_rejecting("loaded")) as llm:
        env = {"SLEUTH_API_BASE": llm.base_url, "SLEUTH_API_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        judged, _ = score(labels, data_dir, "--judge", "openai/judge-model", env=env)
        asked = [body["model"] for body in llm.requests]
    assert asked == ["judge-model"]  # one batch, both claims
    assert judged["both"]["all"] == {**without["both"]["all"], "flagged": 1, "precision": 1.0, "recall": 1.0}
