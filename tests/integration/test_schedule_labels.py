"""With a model that is not the offline one, the report model confirms each changed claim of a
scheduled run: `contradicted` and `updated` label the change, `unchanged` takes it out of the diff."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from sleuth.stream.results import ResearchRequest, Snapshot
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Call, Reply, ScriptedLLM, tool_names, user_text
from sleuth_testkit.scenarios import ResearchModel

QUESTION = "How do Python descriptors work?"


@dataclass
class LabellingModel(ResearchModel):
    label: str = "contradicted"
    asked: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        if "label_changes" in tool_names(body):
            self.asked.append(user_text(body))
            return Reply(tool_calls=[Call("label_changes", {"labels": [{"pair": 1, "label": self.label}]})])
        return super().__call__(body)


def _earlier(snapshot: Snapshot) -> tuple[Snapshot, str]:
    """The snapshot as if the earlier run had said its first claim a little differently, from the same source."""
    claim = snapshot.claims[0]
    said = claim.sentence.rstrip(". ") + ", as the earlier report put it."
    claims = [claim.model_copy(update={"sentence": said}), *snapshot.claims[1:]]
    return snapshot.model_copy(update={"claims": claims, "report_id": "rep_earlier"}), said


@pytest.mark.parametrize("label", ["contradicted", "unchanged"])
async def test_the_report_model_labels_each_changed_claim(label: str) -> None:
    model = LabellingModel(label=label)
    with ScriptedLLM(model) as llm:
        settings = scripted_settings(llm)
        first = await run_engine(settings, ResearchRequest(question=QUESTION, clarify=False, scheduled=True))
        assert first.result.snapshot is not None and first.result.changes is None and not model.asked
        previous, said = _earlier(first.result.snapshot)
        second = await run_engine(
            settings, ResearchRequest(question=QUESTION, clarify=False, scheduled=True, previous=previous)
        )
    changes = second.result.changes
    assert changes is not None and changes.matched_by == "model"
    assert len(model.asked) == 1 and said in model.asked[0]  # one call, with the pair
    changed = [c for c in changes.claims if c.status == "changed"]
    report = second.of("report")[0].obj
    if label == "contradicted":
        assert [(c.previous, c.label) for c in changed] == [(said, "contradicted")]
        assert "**Contradicts the previous report:**" in report.markdown  # type: ignore[union-attr]
    else:
        assert changed == [] and changes.counts.claims_changed == 0
        assert changes.counts.claims_unchanged == len(first.result.snapshot.claims)
        assert "Nothing changed" in report.markdown  # type: ignore[union-attr]
