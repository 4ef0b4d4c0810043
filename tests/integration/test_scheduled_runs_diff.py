"""What changed between a schedule's runs, end to end with the offline model over a local folder
corpus that the test edits between runs (`sleuth index`, `sleuth schedule add|run`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sleuth.config import Settings
from sleuth.store.schedules import ScheduleStore
from sleuth.store.store import Store
from sleuth.stream.packets import parse_packet
from support.cli import sleuth
from support.invariants import check_invariants
from support.widgets import LIMIT, QUESTION, write_corpus


def _run(schedule_id: str, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    done = sleuth(["schedule", "run", schedule_id, "--json"], env, cwd)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    check_invariants([parse_packet(line) for line in lines])  # the section cites in the report's numbering
    objs = [json.loads(line)["obj"] for line in lines]
    by_type: dict[str, Any] = {}
    for obj in objs:
        by_type.setdefault(obj["type"], obj)
    by_type["order"] = [obj["type"] for obj in objs]
    return by_type


def test_a_changed_value_is_a_changed_claim_and_passage_and_the_rest_is_left_alone(tmp_path: Path) -> None:
    env = {"SLEUTH_DATA_DIR": str(tmp_path / "data")}
    corpus = tmp_path / "corpus"
    write_corpus(corpus, 5)
    assert sleuth(["index", str(corpus)], env, tmp_path).returncode == 0
    options = ["--every", "6h", "--source", "corpus", "--mode", "light", "--time-budget", "60s"]
    added = sleuth(["schedule", "add", QUESTION, *options], env, tmp_path)
    schedule_id = added.stdout.split()[0]

    first = _run(schedule_id, env, tmp_path)
    assert "changes" not in first  # nothing to compare with yet
    assert LIMIT.format(5) in first["report"]["markdown"]

    write_corpus(corpus, 7)
    assert sleuth(["index", str(corpus)], env, tmp_path).returncode == 0
    second = _run(schedule_id, env, tmp_path)
    changes = second["changes"]
    assert second["order"].index("changes") == second["order"].index("report") - 1
    assert changes["matched_by"] == "deterministic"
    assert changes["changed"] is True and changes["previous_report_id"] == first["report"]["report_id"]
    assert changes["claims"] == [
        {
            "status": "changed",
            "sentence": LIMIT.format(7),
            "previous": LIMIT.format(5),
            "label": None,  # the offline model confirms nothing: the deterministic match stands
            "numbers": [1],
            "urls": ["corpus://corpus/widget.md"],
        }
    ]
    (source,) = changes["sources"]
    assert (source["status"], source["url"]) == ("changed", "corpus://corpus/widget.md")
    assert source["added"] == [LIMIT.format(7)] and source["removed"] == [LIMIT.format(5)]
    counts = changes["counts"]
    assert counts["claims_unchanged"] >= 2 and counts["sources_unchanged"] == 1  # steel, shipping: left alone
    assert counts["claims_new"] == counts["claims_dropped"] == counts["sources_new"] == counts["sources_gone"] == 0
    report = second["report"]
    assert report["changes"] == {k: v for k, v in changes.items() if k != "type"}
    assert re.match(r"## What changed since \d{4}-\d\d-\d\d \d\d:\d\d UTC\n", report["markdown"])
    section = report["markdown"].split("\n\n## ", 1)[0]  # up to the report's own first heading
    assert f"**Changed:** {LIMIT.format(7)} [1] (before: “{LIMIT.format(5)}”)" in section

    third = _run(schedule_id, env, tmp_path)  # nothing edited
    assert third["changes"]["changed"] is False and third["changes"]["claims"] == []
    section = third["report"]["markdown"].split("\n\n")[:2]
    assert section[1] == "Nothing changed: the same claims, from the same sources."

    store = Store.from_settings(Settings(data_dir=tmp_path / "data"))
    try:
        firings = ScheduleStore(store.database).firings(schedule_id)
        stored = store.get_report(second["report"]["report_id"])
    finally:
        store.close()
    assert [f.status for f in firings] == ["fired"] * 3
    assert stored is not None and stored["changes"]["counts"]["claims_changed"] == 1
    assert stored["snapshot"]["sources"][0]["sha256"]
