"""Scripted models for the browser tests (served by sleuth_testkit.model).

`BrowserResearchModel` is the sensible `ResearchModel` with one cycle of three agents. Every agent
step answers only while `agents_go` is set (it is, unless a test holds it: the `held_agents`
fixture), so a test can keep three lanes running for exactly as long as it needs to look at them,
reload mid-run or press Stop, however slow the machine.

A question containing `XSS_MARKER` makes every step whose text reaches the page (plan,
thinking, agent reports, final report) carry `PAYLOAD`.
"""

from __future__ import annotations

import threading
from typing import Any

from sleuth_testkit.model import Call, Reply, user_text
from sleuth_testkit.scenarios import ResearchModel, sources_in

XSS_MARKER = "xss-probe"

# Each payload, if it ever ran, would open a dialog and/or set window.__pwned.
PAYLOAD = (
    "Payload start. "
    "<script>window.__pwned = 'script'; alert('script')</script> "
    "<img src=x onerror=\"window.__pwned = 'img'; alert('img')\"> "
    "[a markdown javascript link](javascript:window.__pwned='md-link';alert('md-link')) "
    "<a href=\"javascript:window.__pwned='a-link';alert('a-link')\">an html javascript link</a> "
    "<a href=\"JaVaScRiPt:window.__pwned='mixed-case'\">mixed case link</a> "
    "<svg onload=\"window.__pwned = 'svg'\"></svg> "
    "<iframe src=\"javascript:window.__pwned='iframe'\"></iframe> "
    "<b onmouseover=\"window.__pwned = 'hover'\">bold hover text</b> "
    "Payload end."
)


def _probe(body: dict[str, Any]) -> bool:
    return any(XSS_MARKER in str(m.get("content") or "").lower() for m in body["messages"])


class BrowserResearchModel(ResearchModel):
    def __init__(self) -> None:
        self.agents_go = threading.Event()
        self.agents_go.set()
        super().__init__(
            tasks_per_cycle=[
                [
                    "descriptor protocol __get__ __set__",
                    "__getattr__ fallback attribute lookup",
                    "__getattribute__ data descriptors",
                ]
            ],
        )

    def planner(self, body: dict[str, Any]) -> Reply:
        reply = super().planner(body)
        if _probe(body):
            reply.text += f"\n4. Check the odd text {PAYLOAD}"
        return reply

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        reply = super().orchestrator(body)
        if _probe(body):
            for call in reply.tool_calls:
                if call.name == "think_tool" and isinstance(call.arguments, dict):
                    call.arguments["reasoning"] += " " + PAYLOAD
                if call.name == "research_agent" and isinstance(call.arguments, dict):
                    # Agents see only their task: the marker tells them to misbehave too.
                    call.arguments["task"] += f" {XSS_MARKER}"
        return reply

    def agent(self, body: dict[str, Any]) -> Reply:
        reply = super().agent(body)
        reply.gate = self.agents_go
        return reply

    def agent_report(self, body: dict[str, Any]) -> Reply:
        reply = super().agent_report(body)
        reply.gate = self.agents_go
        if _probe(body):
            # Intermediate reports are not link-verified by the engine: the UI's own link
            # policy is all that stands between these links and the page.
            reply.text += " " + PAYLOAD + " See [the Python docs](https://docs.python.org/3/reference/datamodel.html)."
        return reply

    def report(self, body: dict[str, Any]) -> Reply:
        reply = super().report(body)
        if _probe(body):
            numbers = [n for n, _, _ in sources_in(user_text(body).replace(" — ", "\nURL: "))]
            cite = f"[{numbers[0]}]" if numbers else ""
            reply.text = (
                f"## Findings\n\nDescriptors win over `__getattr__` {cite}.\n\n{PAYLOAD}\n\n"
                "<script>window.__pwned = 'block-script'</script>\n\n"
                '<img src="x" onerror="window.__pwned = \'block-img\'">\n\n'
                f"- A list item with a [javascript link](javascript:alert('list')) {cite}\n"
                "- A [normal link](https://docs.python.org/3/reference/datamodel.html)\n"
            )
        return reply


__all__ = ["PAYLOAD", "BrowserResearchModel", "XSS_MARKER", "Call"]
