from sleuth.llm.repair import EMPTY_ASSISTANT, EMPTY_TOOL, repair_tool_call, resolve_tool_name, sanitize_messages
from sleuth.llm.types import ToolCall
from sleuth.research import tool_schemas as ts

AGENT_TOOLS = ["search", "open_url", "think_tool", "generate_report"]


def test_names_are_mapped_only_when_unambiguous() -> None:
    assert resolve_tool_name("functions.open_url", AGENT_TOOLS) == "open_url"
    assert resolve_tool_name("OpenURL", AGENT_TOOLS) == "open_url"
    assert resolve_tool_name("generate-report", AGENT_TOOLS) == "generate_report"
    assert resolve_tool_name("serach", AGENT_TOOLS) == "search"
    assert resolve_tool_name("research_agent", AGENT_TOOLS) is None
    assert resolve_tool_name("browse", AGENT_TOOLS) is None
    assert resolve_tool_name("generate", ["generate_plan", "generate_report"]) is None


def _schemas() -> dict:
    return {t["function"]["name"]: t["function"] for t in ts.agent_tools(True)}


def test_arguments_are_parsed_validated_and_fences_stripped() -> None:
    ok = repair_tool_call(ToolCall("1", "search", '```json\n{"queries": ["a"]}\n```'), _schemas())
    assert ok.ok and ok.parsed == {"queries": ["a"]}
    bad_json = repair_tool_call(ToolCall("2", "search", '{"queries": ['), _schemas())
    assert not bad_json.ok and "not valid JSON" in (bad_json.error or "")
    missing = repair_tool_call(ToolCall("3", "open_url", "{}"), _schemas())
    assert "missing required argument(s): urls" in (missing.error or "")
    wrong = repair_tool_call(ToolCall("4", "search", '{"queries": "a"}'), _schemas())
    assert "wrong type: queries" in (wrong.error or "")
    not_object = repair_tool_call(ToolCall("5", "search", '["a"]'), _schemas())
    assert "must be a JSON object" in (not_object.error or "")
    no_args = repair_tool_call(ToolCall("6", "generate_report", ""), _schemas())
    assert no_args.ok and no_args.parsed == {}


def test_empty_content_is_replaced_without_mutating_the_input() -> None:
    messages = [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "x"}]},
        {"role": "assistant", "content": "  "},
        {"role": "tool", "tool_call_id": "x", "content": ""},
    ]
    clean = sanitize_messages(messages)
    assert clean[0]["content"] is None and clean[1]["content"] == EMPTY_ASSISTANT and clean[2]["content"] == EMPTY_TOOL
    assert messages[1]["content"] == "  "


def test_item_types_are_checked_but_counts_are_left_to_the_engine() -> None:
    numbers = repair_tool_call(ToolCall("7", "search", '{"queries": ["a", 2]}'), _schemas())
    assert "wrong type: queries" in (numbers.error or "")
    four = repair_tool_call(ToolCall("8", "search", '{"queries": ["a", "b", "c", "d"]}'), _schemas())
    assert four.ok and four.parsed == {"queries": ["a", "b", "c", "d"]}  # the engine searches the first three
    empty_task = repair_tool_call(ToolCall("9", "think_tool", '{"reasoning": null}'), _schemas())
    assert "wrong type: reasoning" in (empty_task.error or "")
