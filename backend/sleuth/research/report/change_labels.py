"""The model's confirmation of a schedule's changed claims: one call that labels each pair the
deterministic match made `unchanged`, `updated` or `contradicted`. Only when the report model is
not the offline one, within the report's time; any failure keeps the deterministic diff."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from sleuth.core.clock import DeadlineReached, run_until
from sleuth.llm.gateway import LLMError, ModelAccessError
from sleuth.llm.prompting import render
from sleuth.llm.runtime import is_offline
from sleuth.llm.types import LLMResult
from sleuth.research import tool_schemas as ts
from sleuth.research.report.changes import apply_labels
from sleuth.research.state import RunState
from sleuth.research.step import llm_step
from sleuth.stream.packets import ChangeSet

log = logging.getLogger(__name__)

# One call of the model: messages, tool schemas and tool choice in, its result out.
LabelCall = Callable[[list[dict[str, Any]], list[dict[str, Any]], str], Awaitable[LLMResult]]


async def label_pairs(call: LabelCall, today: str, changes: ChangeSet) -> dict[int, str]:
    """The model's label of each changed claim, by its index in `changes.claims`."""
    indexes = [i for i, claim in enumerate(changes.claims) if claim.status == "changed"]
    pairs = [
        {"index": n, "previous": changes.claims[i].previous or "", "sentence": changes.claims[i].sentence}
        for n, i in enumerate(indexes, 1)
    ]
    messages = [
        {"role": "system", "content": render("change_labels", today=today)},
        {"role": "user", "content": render("change_labels_user", pairs=pairs)},
    ]
    result = await call(messages, [ts.label_changes()], "required")
    labels: dict[int, str] = {}
    for tool_call in result.tool_calls:
        if not (tool_call.ok and tool_call.resolved_name == ts.LABEL_CHANGES and tool_call.parsed is not None):
            continue
        for item in tool_call.parsed.get("labels") or []:
            if not isinstance(item, dict) or not isinstance(item.get("pair"), int):
                continue
            if 1 <= item["pair"] <= len(indexes) and item.get("label") in ts.CHANGE_LABELS:
                labels[indexes[item["pair"] - 1]] = str(item["label"])
    return labels


async def confirm_changes(state: RunState, changes: ChangeSet) -> ChangeSet:
    """`changes` with its changed claims labelled by the report model, when there is one to ask."""
    if not any(c.status == "changed" for c in changes.claims) or is_offline(state.settings.model_for("report")):
        return changes

    async def call(messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: str) -> LLMResult:
        return await llm_step(state, "report", messages, tools=tools, tool_choice=tool_choice)

    end_at = state.deadlines.report_end_at(state.clock.now())
    try:
        labels = await run_until(state.clock, end_at, label_pairs(call, state.today, changes))
    except (ModelAccessError, LLMError, DeadlineReached) as exc:
        log.warning("change labels unavailable (%s); keeping the deterministic diff", exc)
        return changes
    return apply_labels(changes, labels)
