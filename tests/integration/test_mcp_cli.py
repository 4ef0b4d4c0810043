"""`sleuth mcp list`, `sleuth mcp call`, `sleuth doctor`'s server lines, and a `sleuth research` run
whose report cites an MCP tool's result, with the fixture server as a stdio subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sleuth_testkit.model import ScriptedLLM
from support.cli import sleuth
from support.mcp import McpModel, stdio_entry, write_servers

QUESTION = "How do Python descriptors and __getattr__ interact?"


def servers_env(tmp_path: Path, servers: dict[str, dict[str, object]]) -> dict[str, str]:
    return {"SLEUTH_MCP_CONFIG": str(write_servers(tmp_path / "mcp.json", servers))}


def test_list_shows_each_server_its_state_and_tools(tmp_path: Path) -> None:
    env = servers_env(
        tmp_path,
        {
            "notes": stdio_entry(exclude=["crash"]),
            "stuck": stdio_entry("--hang", init_timeout_s=1),
            "off": {"command": "x", "enabled": False},
        },
    )
    done = sleuth(["mcp", "list"], env, tmp_path)
    assert done.returncode == 1, done.stderr  # a server is unavailable
    lines = done.stdout.splitlines()
    assert lines[0] == "notes  ready  stdio  6 of 7 tools"
    assert "  notes__lookup_notes  Look up the fixture notes about a Python topic, such as descriptors." in lines
    assert not any("notes__crash" in line for line in lines)
    assert "stuck  unavailable  stdio  (did not start within 1 s)" in lines
    assert "off  disabled  stdio  (enabled is false)" in lines


def test_call_prints_the_result_and_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    env = servers_env(tmp_path, {"notes": stdio_entry()})
    done = sleuth(["mcp", "call", "notes", "lookup_notes", "--args", '{"topic": "slots"}'], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Fixture notes on slots:")
    slow = sleuth(["mcp", "call", "notes", "stall", "--timeout", "0.5"], env, tmp_path)
    assert (slow.returncode, slow.stderr.strip()) == (1, "Error: notes stall: no answer within 0.5 s")
    unknown = sleuth(["mcp", "call", "nobody", "x"], env, tmp_path)
    assert (unknown.returncode, unknown.stderr.strip()) == (1, "Error: nobody x: no MCP server is named 'nobody'")
    bad = sleuth(["mcp", "call", "notes", "x", "--args", "[1]"], env, tmp_path)
    assert bad.returncode == 2 and "Invalid value for --args: must be a JSON object" in bad.stderr
    assert "Traceback" not in slow.stderr + unknown.stderr + bad.stderr


def test_a_broken_file_is_one_line_and_no_file_is_said(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text("{not json", encoding="utf-8")
    done = sleuth(["mcp", "list"], {"SLEUTH_MCP_CONFIG": str(tmp_path / "mcp.json")}, tmp_path)
    assert done.returncode == 1
    path = tmp_path / "mcp.json"
    assert done.stderr.strip().startswith(f"Error: MCP servers file {path}: not valid JSON (")
    assert len(done.stderr.strip().splitlines()) == 1
    none = sleuth(["mcp", "list"], {}, tmp_path)
    assert none.returncode == 0 and none.stdout.startswith("No MCP servers are configured")


def test_doctor_checks_every_server(tmp_path: Path) -> None:
    env = servers_env(tmp_path, {"notes": stdio_entry(), "stuck": stdio_entry("--hang", init_timeout_s=1)})
    done = sleuth(["doctor"], env, tmp_path)
    assert done.returncode == 1
    assert "✓ mcp notes: 7 of 7 tools offered (stdio)" in done.stdout.splitlines()
    assert "✗ mcp stuck: did not start within 1 s" in done.stdout.splitlines()


def test_a_cli_research_run_cites_an_mcp_result(tmp_path: Path) -> None:
    env = servers_env(
        tmp_path, {"fixture": stdio_entry(), "stuck": stdio_entry("--hang", "--name", "stuck", init_timeout_s=1)}
    )
    with ScriptedLLM(McpModel()) as llm:
        env |= {"SLEUTH_MODEL": "openai/any-model", "SLEUTH_API_BASE": llm.base_url, "SLEUTH_API_KEY": "sk-x"}
        done = sleuth(["research", "--json", "--no-clarify", "--mode", "light", QUESTION], env, tmp_path)
    assert done.returncode == 0, done.stderr
    packets = [json.loads(line) for line in done.stdout.splitlines()]
    report = next(p["obj"] for p in packets if p["obj"]["type"] == "report")
    sources = [s for s in report["sources"] if s["url"].startswith("mcp://fixture/lookup_notes?args=")]
    assert len(sources) == 1 and f"[{sources[0]['number']}]" in report["markdown"]
    assert report["unsupported_claims"] == []
    notices = [p["obj"]["detail"] for p in packets if p["obj"]["type"] == "degraded"]
    assert "MCP server stuck is unavailable: did not start within 1 s" in notices
    assert packets[-1]["obj"]["reason"] == "completed"
    # the command closed the server it started before it returned
    log = (Path(os.environ["SLEUTH_DATA_DIR"]) / "logs" / "mcp-servers.log").read_text(encoding="utf-8")
    assert "fixture server fixture stopped" in log.splitlines()


def test_eval_runs_get_the_mcp_tools_and_the_command_closes_them(tmp_path: Path) -> None:
    questions, out = tmp_path / "questions.jsonl", tmp_path / "out"
    questions.write_text("".join(json.dumps({"id": i, "prompt": QUESTION}) + "\n" for i in (1, 2)), encoding="utf-8")
    env = servers_env(tmp_path, {"fixture": stdio_entry()})
    with ScriptedLLM(McpModel()) as llm:
        env |= {"SLEUTH_MODEL": "openai/any-model", "SLEUTH_API_BASE": llm.base_url, "SLEUTH_API_KEY": "sk-x"}
        done = sleuth(["eval", str(questions), "--out", str(out), "--mode", "light"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    written = (out / "articles.jsonl").read_text(encoding="utf-8").splitlines()
    articles = [json.loads(line)["article"] for line in written]
    assert len(articles) == 2 and all("mcp://fixture/lookup_notes?args=" in article for article in articles)
    # one server for both questions, closed by the command before it returned
    log = (Path(os.environ["SLEUTH_DATA_DIR"]) / "logs" / "mcp-servers.log").read_text(encoding="utf-8").splitlines()
    assert [line for line in log if line.startswith("fixture server fixture")] == [
        "fixture server fixture starting",
        "fixture server fixture stopped",
    ]
