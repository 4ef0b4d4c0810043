"""The parts of MCP support that need no server: the servers file, tool names, which tools an agent
sees, and what a result becomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.tools.base import ToolError
from sleuth.tools.mcp.client import ResourceText, ToolInfo, ToolOutput
from sleuth.tools.mcp.config import McpConfigError, ServerConfig, config_path, load_config, parse_config
from sleuth.tools.mcp.hub import MAX_NAME, McpHub, McpTool, exposed_name
from sleuth.tools.mcp.results import call_url, pick_tools, result_page
from sleuth.tools.web.credibility import is_unsafe_citation_url

FILE = """{"mcpServers": {
  "files": {"command": "npx", "args": ["-y", "pkg", "${ROOT}"], "env": {"TOKEN": "${SECRET}"},
            "exclude": ["delete"], "call_timeout_s": 5},
  "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${SECRET}"},
             "include": ["search"], "max_output_chars": 100, "enabled": false},
  "missing": {"command": "x", "env": {"K": "${NOT_SET}"}},
  "both": {"command": "x", "url": "https://a.example/mcp"},
  "bad name!": {"command": "x"},
  "typo": {"command": "x", "exlude": ["a"]},
  "other_client": {"type": "stdio", "command": "x", "disabled": true, "autoApprove": [], "timeout": 60},
  "old": {"type": "sse", "url": "https://b.example/sse"}
}}"""


def test_the_standard_file_shape_with_variables_from_the_environment() -> None:
    config = parse_config(FILE, Path("mcp.json"), {"ROOT": "/data", "SECRET": "s3cret"})
    files, remote, missing, both, bad, typo, other_client, old = config.servers
    assert (files.transport, files.command, files.args, dict(files.env)) == (
        "stdio",
        "npx",
        ("-y", "pkg", "/data"),
        {"TOKEN": "s3cret"},
    )
    assert files.call_timeout_s == 5 and files.init_timeout_s == 30 and files.problem is None
    assert files.offers("read") and not files.offers("delete")
    assert (remote.transport, remote.url, dict(remote.headers)) == (
        "http",
        "https://mcp.example.com/mcp",
        {"Authorization": "Bearer s3cret"},
    )
    assert remote.offers("search") and not remote.offers("fetch") and not remote.enabled
    assert remote.max_output_chars == 100
    # one entry's mistake is that server's problem, said in one line; the others are usable
    assert missing.problem == "environment variable NOT_SET is not set"
    assert both.problem == 'give "command" (stdio) or "url" (streamable HTTP), not both'
    assert bad.problem is not None and "'bad name!'" in bad.problem
    assert typo.problem == "unknown key(s): exlude"
    # another client's keys are no mistake; its `disabled` is honoured
    assert other_client.problem is None and not other_client.enabled
    assert old.problem == "the SSE transport is not supported; use the server's streamable HTTP URL"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{nope", "not valid JSON"),
        ('{"servers": {}}', '"mcpServers"'),
        ("[]", '"mcpServers"'),
    ],
)
def test_a_file_that_cannot_be_used_is_one_clear_line(text: str, message: str) -> None:
    with pytest.raises(McpConfigError, match=message) as caught:
        parse_config(text, Path("/etc/mcp.json"), {})
    assert str(caught.value).startswith("MCP servers file /etc/mcp.json: ")
    assert "\n" not in str(caught.value)


def test_the_file_comes_from_the_setting_else_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert config_path(settings) is None and load_config(settings).servers == ()
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"a": {"command": "x"}}}', encoding="utf-8")
    assert config_path(settings) == tmp_path / "mcp.json"
    assert [s.name for s in load_config(settings).servers] == ["a"]
    elsewhere = tmp_path / "other.json"
    with pytest.raises(McpConfigError, match="cannot be read"):
        load_config(Settings(data_dir=tmp_path, mcp_config=elsewhere))


def test_exposed_names_are_prefixed_provider_safe_and_unique() -> None:
    taken: set[str] = set()
    first = exposed_name("files", "read.file", taken)
    taken.add(first)
    assert first == "files__read_file"
    clash = exposed_name("files", "read_file", taken)  # the same once made safe: a suffix tells them apart
    assert clash != first and clash.startswith("files__read_file_") and len(clash) <= MAX_NAME
    long = exposed_name("server", "t" * 100, set())
    assert len(long) == MAX_NAME and long.startswith("server__ttt")
    assert exposed_name("s", "grüße", set()) == "s__gr__e"


def _tool(server: str, name: str, description: str = "", max_output_chars: int = 1000) -> McpTool:
    return McpTool(
        name=f"{server}__{name}",
        server=server,
        tool=name,
        description=description,
        parameters={"type": "object", "properties": {}},
        call_timeout_s=1,
        max_output_chars=max_output_chars,
    )


def test_many_tools_are_narrowed_to_those_the_task_names() -> None:
    tools = [_tool("db", f"table_{i}", "Row counts of a table.") for i in range(20)]
    tools.append(_tool("weather", "forecast", "Weather forecasts for a city."))
    tools.append(_tool("papers", "search_papers", "Search scientific papers by keywords."))
    picked = pick_tools(tools, "Find recent papers about weather forecasting", 3)
    assert [t.name for t in picked][:2] == ["weather__forecast", "papers__search_papers"]
    assert len(picked) == 3
    assert pick_tools(tools[:5], "anything", 15) == tools[:5]  # all of them when they fit


def test_a_result_is_a_document_with_a_stable_url_a_title_and_its_text_cut() -> None:
    tool = _tool("notes", "lookup", max_output_chars=50)
    page = result_page(tool, {"topic": "descriptors"}, ToolOutput(texts=["x" * 80]))
    assert page.document.url == call_url("notes", "lookup", {"topic": "descriptors"})
    assert page.document.url.startswith("mcp://notes/lookup?args=")
    assert call_url("notes", "lookup", {"a": 1, "b": 2}) == call_url("notes", "lookup", {"b": 2, "a": 1})
    assert page.document.title == "notes · lookup: descriptors"
    assert page.document.source == "mcp:notes"
    assert page.text == "x" * 50 + "\n\n[cut at 50 characters]"
    assert is_unsafe_citation_url(page.document.url) is None


def test_resources_and_links_are_text_and_a_web_resource_keeps_its_uri() -> None:
    tool = _tool("docs", "fetch")
    web = result_page(tool, {}, ToolOutput(resources=[ResourceText("https://docs.example.com/a", "Page A")]))
    assert web.document.url == "https://docs.example.com/a" and web.text == "Page A"
    other = result_page(
        tool,
        {},
        ToolOutput(resources=[ResourceText("notes://x", "Note X")], links=[("notes://y", "y")], skipped=1),
    )
    assert other.document.url.startswith("mcp://docs/fetch?args=")
    assert "Note X" in other.text and "- y: notes://y" in other.text and "1 non-text part(s)" in other.text


def test_an_error_result_or_an_empty_one_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="the tool reported an error: no such row"):
        result_page(_tool("db", "get"), {}, ToolOutput(texts=["no such row"], is_error=True))
    with pytest.raises(ToolError, match="no text"):
        result_page(_tool("db", "get"), {}, ToolOutput())


def test_a_tool_keeps_the_servers_own_description_beside_the_one_agents_read() -> None:
    hub = McpHub([ServerConfig(name="tracker", transport="memory")])
    hub.statuses[0].tools = [ToolInfo("issues", "[beta] Search\n  open issues", {}), ToolInfo("ping", "", {})]
    issues, ping = hub.tools_listed()
    assert issues.description == "[MCP server tracker] [beta] Search\n  open issues"
    assert issues.summary == "[beta] Search open issues"  # what `sleuth mcp list` shows: nothing cut off
    assert (ping.description, ping.summary) == ("[MCP server tracker] ping", "ping")
