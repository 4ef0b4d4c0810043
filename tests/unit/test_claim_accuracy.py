"""eval/claim_accuracy.py scores the claim check against hand labels (docs/evaluation.md's precision and recall)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WITH = "corpus://python-reference/with"
POWER = "corpus://python-reference/power"


def label(sentence: str, url: str, verdict: str) -> str:
    row = {"id": sentence[:10], "kind": "test", "sentence": sentence, "cites": {"1": url}, "marker": "[1]"}
    return json.dumps({**row, "label": verdict})


def test_the_script_counts_hits_misses_and_false_alarms(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "\n".join(
            [
                label("The context manager's __enter__() is loaded for later use.", WITH, "supported"),
                label("The context manager's __enter__() is loaded for later use.", POWER, "unsupported"),
                label(
                    "If __exit__() returns true, the exception is reraised after the with statement.",
                    WITH,
                    "unsupported",
                ),
                label("Raising a negative number to a fractional power gives a complex number.", POWER, "supported"),
            ]
        )
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "eval" / "claim_accuracy.py"), str(labels), "--show-errors"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout[done.stdout.index("{") :])
    # One wrong-document citation caught, one inverted rule missed, no false alarm.
    assert report["all"] == {
        "citations": 4,
        "labelled_unsupported": 2,
        "flagged": 1,
        "precision": 1.0,
        "recall": 0.5,
        "false_alarm_rate": 0.0,
    }
    assert "missed: If __exit_ [1] 'If __exit__() returns true" in done.stdout
