"""Claim-support verdicts from a judge model, when one is configured (`SLEUTH_JUDGE_MODEL`)."""

from __future__ import annotations

import logging

from sleuth.llm.gateway import LLMError, ModelAccessError
from sleuth.llm.prompting import render
from sleuth.research import tool_schemas as ts
from sleuth.research.state import RunState
from sleuth.research.step import llm_step
from sleuth.research.time.deadlines import DeadlineReached, run_until
from sleuth.stream.packets import Error
from sleuth.stream.results import ClaimVerdict

log = logging.getLogger(__name__)

BATCH = 30  # claims per judge call: enough context per claim, few calls per report


async def _judge_batch(state: RunState, batch: list[ClaimVerdict]) -> list[ClaimVerdict]:
    claims = [
        {"index": i, "marker": v.marker, "sentence": v.sentence, "passages": [v.passage] if v.passage else []}
        for i, v in enumerate(batch, 1)
    ]
    messages = [
        {"role": "system", "content": render("claim_judge", today=state.today)},
        {"role": "user", "content": render("claim_judge_user", claims=claims)},
    ]
    result = await llm_step(state, "judge", messages, tools=[ts.claim_verdicts()], tool_choice="required")
    judged = list(batch)
    for call in result.tool_calls:
        if not (call.ok and call.resolved_name == ts.CLAIM_VERDICTS and call.parsed is not None):
            continue
        for item in call.parsed.get("verdicts") or []:
            if not isinstance(item, dict) or not isinstance(item.get("claim"), int):
                continue
            index = item["claim"] - 1
            if 0 <= index < len(batch) and isinstance(item.get("supported"), bool):
                supported = item["supported"]
                reason = "" if supported else str(item.get("reason") or "the judge found no support in the source")
                judged[index] = batch[index].model_copy(
                    update={"supported": supported, "reason": reason, "checker": "judge"}
                )
    return judged


async def judge_claims(state: RunState, verdicts: list[ClaimVerdict]) -> list[ClaimVerdict]:
    """The judge's verdicts, within one report timeout; a claim it does not answer keeps its overlap verdict."""
    end_at = state.deadlines.report_end_at(state.clock.now())
    out: list[ClaimVerdict] = []
    for start in range(0, len(verdicts), BATCH):
        batch = verdicts[start : start + BATCH]
        try:
            out.extend(await run_until(state.clock, end_at, _judge_batch(state, batch)))
        except ModelAccessError as exc:
            # The report is written; a judge that refuses its credentials must not cost the run.
            state.emit(Error(message=f"{exc} Citations were checked by word overlap instead.", recoverable=True))
            out.extend(verdicts[start:])
            break
        except (LLMError, DeadlineReached) as exc:
            log.warning("claim judge unavailable (%s); keeping the overlap check's verdicts", exc)
            out.extend(verdicts[start:])
            break
    return out
