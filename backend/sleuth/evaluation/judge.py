"""RACE-style report scores from a judge model (any litellm model, through the gateway)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sleuth.llm.gateway import LLMError, LLMGateway
from sleuth.llm.prompting import render
from sleuth.research import tool_schemas as ts


class RaceJudge:
    """Scores comprehensiveness, depth, instruction following and readability from 0 to 10.

    Unlike DeepResearch Bench's RACE, which weighs criteria per task and compares with a reference
    report, these are absolute scores with equal weights: comparable between Sleuth runs, not with
    DRB's leaderboard.
    """

    def __init__(self, gateway: LLMGateway) -> None:
        self.gateway = gateway

    async def score(self, question: str, article: str) -> dict[str, Any]:
        """The four scores and their mean as `overall`, or `{"error": ...}` when the judge gave none."""
        messages = [
            {"role": "system", "content": render("eval_race", today=dt.date.today().isoformat())},
            {"role": "user", "content": render("eval_race_user", question=question, article=article)},
        ]
        tool = ts.race_scores()
        try:
            result = await self.gateway.complete("judge", messages, tools=[tool], tool_choice="required")
        except LLMError as exc:
            return {"error": str(exc)}
        for call in result.tool_calls:
            if call.ok and call.resolved_name == ts.RACE_SCORES and call.parsed is not None:
                scores = {name: max(0.0, min(10.0, float(call.parsed[name]))) for name in ts.RACE_CRITERIA}
                return {
                    **scores,
                    "overall": round(sum(scores.values()) / len(scores), 3),
                    "justification": str(call.parsed.get("justification", "")),
                }
        return {"error": "the judge did not return scores"}
