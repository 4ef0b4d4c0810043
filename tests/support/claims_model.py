"""A scripted model whose report has one sentence its source says and one it never says (claim checks, eval)."""

from __future__ import annotations

import re
from typing import Any

from sleuth_testkit.model import Call, Reply, tool_names, user_text
from sleuth_testkit.scenarios import ResearchModel, assistant_turns, last_tool_texts, sources_in

SUPPORTED = (
    'The "with" statement is used to wrap the execution of a block with methods defined by a context manager [1].'
)
UNSUPPORTED = "The moon is made of green cheese and orbits Mars every 3 days [1]."


class ClaimsModel(ResearchModel):
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
