"""Recognise which Sleuth step a request is, from the request alone, and answer it.

The same signals a hosted model would act on: the offered tools, and for steps without tools
the facts block the prompt declares (`sleuth.llm.prompt_facts`), never its prose.
record_artifact offered -> artifact; decline_followup offered -> follow-up answer;
record_overview / record_dialogue offered -> audio script;
tools == {generate_plan} -> clarifier; research_agent offered -> orchestrator; search/open_url
offered -> research agent; no tools: agent-report facts -> agent report, plan facts -> planner,
anything else -> final report.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sleuth.llm.offline.agent import research
from sleuth.llm.offline.artifact import record_artifact
from sleuth.llm.offline.clarifier import clarify
from sleuth.llm.offline.final import final_report
from sleuth.llm.offline.followup import followup
from sleuth.llm.offline.orchestrator import orchestrate
from sleuth.llm.offline.planner import plan
from sleuth.llm.offline.reports import agent_report
from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.script import record_dialogue, record_overview
from sleuth.llm.prompt_facts import AgentReportFacts, PlanFacts
from sleuth.llm.prompting import render

log = logging.getLogger(__name__)

Step = Callable[[OfflineRequest], Reply]


def classify(request: OfflineRequest) -> str:
    names = request.tool_names
    if "record_artifact" in names:
        return "artifact"
    if "decline_followup" in names:
        return "followup"
    if "record_overview" in names:
        return "overview"
    if "record_dialogue" in names:
        return "dialogue"
    if "generate_plan" in names and "research_agent" not in names:
        return "clarifier"
    if "research_agent" in names:
        return "orchestrator"
    if "open_url" in names or "search" in names:
        return "agent"
    if request.facts(AgentReportFacts) is not None:
        return "agent_report"
    if request.facts(PlanFacts) is not None:
        return "planner"
    return "report"


STEPS: dict[str, Step] = {
    "artifact": record_artifact,
    "followup": followup,
    "overview": record_overview,
    "dialogue": record_dialogue,
    "clarifier": clarify,
    "planner": plan,
    "orchestrator": orchestrate,
    "agent": research,
    "agent_report": agent_report,
    "report": final_report,
}


def fallback(request: OfflineRequest) -> Reply:
    """A harmless answer: finish the step if a tool can, else say there is nothing to extract."""
    if request.offers("generate_report"):
        return Reply(tool_calls=[("generate_report", {})])
    if request.offers("generate_plan"):
        return Reply(tool_calls=[("generate_plan", {})])
    return Reply(text=render("offline/fallback"))


def _forced_tool(tool_choice: object) -> str | None:
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        if isinstance(function, dict) and function.get("name"):
            return str(function["name"])
    return None


def _obey_tool_choice(request: OfflineRequest, reply: Reply) -> Reply:
    """Honour tool_choice like a provider would: none -> text, required -> a call, named -> that call."""
    choice = request.tool_choice
    forced = _forced_tool(choice)
    if choice == "none" or not request.tools:
        if reply.tool_calls and not reply.text:
            return Reply(text=render("offline/fallback"))
        return Reply(text=reply.text)
    if forced and request.offers(forced):
        kept = [call for call in reply.tool_calls if call[0] == forced]
        return Reply(tool_calls=kept or [(forced, {})])
    if choice == "required" and not reply.tool_calls:
        forced_reply = fallback(request)
        return forced_reply if forced_reply.tool_calls else Reply(tool_calls=[(sorted(request.tool_names)[0], {})])
    # never call a tool that was not offered
    offered = [call for call in reply.tool_calls if request.offers(call[0])]
    if reply.tool_calls and not offered and not reply.text:
        return fallback(request)
    return Reply(text=reply.text, tool_calls=offered)


def respond(request: OfflineRequest) -> Reply:
    """Answer one request; any internal failure becomes the fallback, never an exception."""
    step = classify(request)
    try:
        reply = STEPS[step](request)
    except Exception:  # the model must always answer; the engine treats a crash like a provider outage
        log.exception("offline model failed on a %s request; answering with the fallback", step)
        reply = fallback(request)
    try:
        return _obey_tool_choice(request, reply)
    except Exception:
        log.exception("offline model could not apply tool_choice")
        return reply
