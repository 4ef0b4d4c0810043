"""Tool schemas shown to models. The mock tools are intercepted by the engine, never executed."""

from __future__ import annotations

from typing import Any

from sleuth.llm.prompting import render, tool_schema

GENERATE_PLAN = "generate_plan"
RESEARCH_AGENT = "research_agent"
GENERATE_REPORT = "generate_report"
THINK_TOOL = "think_tool"
SEARCH = "search"
OPEN_URL = "open_url"
# Queries per `search` call and URLs per `open_url` call: the schemas, the prompts and the engine all use this.
MAX_ITEMS_PER_CALL = 3
CLAIM_VERDICTS = "claim_verdicts"
LABEL_CHANGES = "label_changes"
CHANGE_LABELS = ("unchanged", "updated", "contradicted")
RACE_SCORES = "race_scores"
RACE_CRITERIA = ("comprehensiveness", "depth", "instruction_following", "readability")


def _tool(name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    return tool_schema(name, properties, required, max_items=MAX_ITEMS_PER_CALL)


def _string_list(description_template: str) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "maxItems": MAX_ITEMS_PER_CALL,
        "description": render(description_template, max_items=MAX_ITEMS_PER_CALL),
    }


def generate_plan() -> dict[str, Any]:
    return _tool(GENERATE_PLAN)


def research_agent() -> dict[str, Any]:
    return _tool(
        RESEARCH_AGENT,
        {
            "task": {"type": "string", "description": render("tools/research_agent_task")},
            "plan_step": {"type": "integer", "minimum": 1, "description": render("tools/research_agent_plan_step")},
        },
        ["task"],
    )


def generate_report() -> dict[str, Any]:
    return _tool(GENERATE_REPORT)


def think_tool() -> dict[str, Any]:
    return _tool(
        THINK_TOOL,
        {"reasoning": {"type": "string", "description": render("tools/think_tool_reasoning")}},
        ["reasoning"],
    )


def search() -> dict[str, Any]:
    return _tool(SEARCH, {"queries": _string_list("tools/search_queries")}, ["queries"])


def open_url() -> dict[str, Any]:
    return _tool(OPEN_URL, {"urls": _string_list("tools/open_url_urls")}, ["urls"])


def claim_verdicts() -> dict[str, Any]:
    verdict = {
        "type": "object",
        "properties": {
            "claim": {"type": "integer"},
            "supported": {"type": "boolean"},
            "reason": {"type": "string", "description": render("tools/claim_verdicts_reason")},
        },
        "required": ["claim", "supported", "reason"],
    }
    return _tool(CLAIM_VERDICTS, {"verdicts": {"type": "array", "items": verdict}}, ["verdicts"])


def label_changes() -> dict[str, Any]:
    """A schedule's changed claims, each pair labelled (research/report/change_labels.py)."""
    label = {
        "type": "object",
        "properties": {
            "pair": {"type": "integer"},
            "label": {
                "type": "string",
                "enum": list(CHANGE_LABELS),
                "description": render("tools/label_changes_label"),
            },
        },
        "required": ["pair", "label"],
    }
    return _tool(LABEL_CHANGES, {"labels": {"type": "array", "items": label}}, ["labels"])


def race_scores() -> dict[str, Any]:
    criterion = {"type": "number", "minimum": 0, "maximum": 10, "description": render("tools/race_scores_criterion")}
    properties: dict[str, Any] = {name: dict(criterion) for name in RACE_CRITERIA}
    properties["justification"] = {"type": "string", "description": render("tools/race_scores_justification")}
    return _tool(RACE_SCORES, properties, [*RACE_CRITERIA, "justification"])


def orchestrator_tools(with_think: bool) -> list[dict[str, Any]]:
    tools = [research_agent(), generate_report()]
    return tools + [think_tool()] if with_think else tools


def agent_tools(with_think: bool) -> list[dict[str, Any]]:
    tools = [search(), open_url(), generate_report()]
    return tools + [think_tool()] if with_think else tools


RECORD_ARTIFACT = "record_artifact"


def record_artifact() -> dict[str, Any]:
    """The report's title, summary and key findings, as one structured call (no prose to parse)."""
    finding = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "citations": {"type": "array", "items": {"type": "integer", "minimum": 1}},
        },
        "required": ["text", "citations"],
    }
    return _tool(
        RECORD_ARTIFACT,
        {
            "title": {"type": "string", "description": render("tools/record_artifact_title")},
            "summary": {"type": "string", "description": render("tools/record_artifact_summary")},
            "key_findings": {
                "type": "array",
                "items": finding,
                "minItems": 3,
                "maxItems": 7,
                "description": render("tools/record_artifact_findings"),
            },
        },
        ["title", "summary", "key_findings"],
    )


DECLINE_FOLLOWUP = "decline_followup"


def decline_followup() -> dict[str, Any]:
    """Called instead of answering when the report and its sources do not contain the answer."""
    return _tool(DECLINE_FOLLOWUP)
