"""`sleuth research --server URL`: the run on a real server (uvicorn on 127.0.0.1, accounts on, the
scripted model) and the command in this process, shown as a local run is; the API key from the
environment or a file, never printed; what the server refuses as one line and an exit code."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from conftest import LiveServer, live_server
from sleuth.accounts.service import Accounts
from sleuth.cli.remote import EXIT_NOT_FOUND, EXIT_REFUSED, refusal, sse_data
from sleuth.stream.packets import parse_packet
from sleuth_testkit.engine import scripted_settings
from sleuth_testkit.model import ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.cli import Done, sleuth
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"


@dataclass
class Remote:
    live: LiveServer
    key: str  # ada's

    @property
    def url(self) -> str:
        return self.live.base_url


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Remote]:
    # Asks its clarifying questions unless the request says --no-clarify.
    model = ResearchModel(clarify_questions="1. Which Python version?\n2. Which implementation?")
    data_dir = tmp_path_factory.mktemp("remote")
    with ScriptedLLM(model) as llm, live_server(scripted_settings(llm, auth="accounts", data_dir=data_dir)) as live:
        accounts: Accounts = live.app_state.accounts
        ada, _ = accounts.add_user("ada", "ada's long password", admin=False)
        yield Remote(live, accounts.new_key(ada.id, "cli", expires_in_days=None).key)


def research(args: list[str], env: dict[str, str], cwd: Path) -> Done:
    done = sleuth(["research", *args], env, cwd)
    assert done.returncode == 0 or "Traceback" not in done.stderr, done.stderr  # a failure is one line
    return done


def ada_sessions(remote: Remote) -> list[str]:
    listed = httpx.get(f"{remote.url}/api/sessions", headers={"Authorization": f"Bearer {remote.key}"})
    return [session["id"] for session in listed.json()]


def test_a_run_on_the_server_shows_as_a_local_run_does(remote: Remote, tmp_path: Path) -> None:
    before = ada_sessions(remote)
    env = {"SLEUTH_SERVER_API_KEY": remote.key}
    done = research(["--server", remote.url, "--no-clarify", "--mode", "light", QUESTION], env, tmp_path)
    assert done.returncode == 0, done.stderr
    # The local command's progress lines, from the server's packets: the plan, the lanes, the summary.
    assert "Sleuth · light mode" in done.stderr and "Plan:" in done.stderr and "[lane 3]" in done.stderr
    assert "Done in " in done.stderr
    # ... and its report, to stdout: the artifact, then the terminal's sources list.
    assert done.stdout.startswith(f"# {QUESTION}\n\n**Descriptors and \\_\\_getattr\\_\\_**\n")
    assert "\n## Key findings\n\n- Finding backed by source" in done.stdout and "\nSources:\n[1] " in done.stdout
    new = [s for s in ada_sessions(remote) if s not in before]
    assert len(new) == 1  # the run is the key's user's
    assert f"is on the server: {remote.url}/#/s/{new[0]}" in done.stderr
    assert remote.key not in done.stdout + done.stderr


def test_json_lines_with_the_key_from_a_file_an_answer_and_the_report_written(remote: Remote, tmp_path: Path) -> None:
    key_file = tmp_path / "sleuth.key"
    key_file.write_text(f"{remote.key}\n")
    env = {"SLEUTH_SERVER_API_KEY_FILE": str(key_file), "SLEUTH_SERVER_URL": remote.url}
    done = research(["--json", "descriptors?", "--answer", "3.12, CPython", "-o", "report.md"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    packets = [parse_packet(line) for line in done.stdout.splitlines()]
    stops = [p.obj.reason for p in packets if p.obj.type == "stop"]
    assert stops == ["clarification", "completed"]  # the questions' run, then the answer's
    check_invariants([p for p in packets if p.run_id == packets[-1].run_id])
    report = (tmp_path / "report.md").read_text()
    assert report.startswith("# descriptors?") and "Descriptors take precedence" in report
    assert remote.key not in done.stdout + done.stderr


def test_without_an_answer_the_questions_are_printed_and_nothing_else_happens(remote: Remote, tmp_path: Path) -> None:
    done = research(["--server", remote.url, "descriptors?"], {"SLEUTH_SERVER_API_KEY": remote.key}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1. Which Python version?" in done.stderr and "--answer" in done.stderr and done.stdout == ""


def test_what_the_server_refuses_is_one_line_and_an_exit_code(remote: Remote, tmp_path: Path) -> None:
    args = ["--server", remote.url, "--no-clarify", QUESTION]
    anonymous = research(args, {}, tmp_path)
    assert anonymous.returncode == EXIT_REFUSED
    assert "the server needs an API key" in anonymous.stderr and "SLEUTH_SERVER_API_KEY" in anonymous.stderr
    wrong_key = "sk_sleuth_not-a-real-key"
    wrong = research(args, {"SLEUTH_SERVER_API_KEY": wrong_key}, tmp_path)
    assert wrong.returncode == EXIT_REFUSED and "refused the API key: invalid, expired or revoked" in wrong.stderr
    assert wrong_key not in wrong.stdout + wrong.stderr
    elsewhere = research(
        ["--server", f"{remote.url}/not-sleuth", QUESTION], {"SLEUTH_SERVER_API_KEY": remote.key}, tmp_path
    )
    assert elsewhere.returncode == EXIT_NOT_FOUND and "is --server the address of a Sleuth server?" in elsewhere.stderr
    with _any_page() as page_url:
        page = research(["--server", page_url, QUESTION], {}, tmp_path)
    assert page.returncode == EXIT_NOT_FOUND and "does not answer as a Sleuth server" in page.stderr
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # nothing listens on it
        gone = research(["--server", f"http://127.0.0.1:{closed.getsockname()[1]}", QUESTION], {}, tmp_path)
    assert gone.returncode == 1 and "cannot reach the server" in gone.stderr


@contextmanager
def _any_page() -> Iterator[str]:
    """A web server that answers every request with a page of HTML: not Sleuth."""

    class Page(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = b"<html>welcome</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Page) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}"
        finally:
            httpd.shutdown()
            thread.join(5)


def test_a_key_that_cannot_be_read_is_refused_before_anything_is_sent(remote: Remote, tmp_path: Path) -> None:
    args = ["--server", remote.url, "--no-clarify", QUESTION]
    missing = research(args, {"SLEUTH_SERVER_API_KEY_FILE": str(tmp_path / "none.key")}, tmp_path)
    assert missing.returncode == 1 and "cannot read the API key file" in missing.stderr
    (tmp_path / "empty.key").write_text("\n")
    empty = research(args, {"SLEUTH_SERVER_API_KEY_FILE": str(tmp_path / "empty.key")}, tmp_path)
    assert empty.returncode == 1 and "is empty" in empty.stderr
    (tmp_path / "two.key").write_text("sk_sleuth_one sk_sleuth_two\n")
    two = research(args, {"SLEUTH_SERVER_API_KEY_FILE": str(tmp_path / "two.key")}, tmp_path)
    assert two.returncode == 1 and "does not hold an API key" in two.stderr and "sk_sleuth_one" not in two.stderr
    both = research(args, {"SLEUTH_SERVER_API_KEY": remote.key, "SLEUTH_SERVER_API_KEY_FILE": "x"}, tmp_path)
    assert both.returncode == 2 and "not both" in both.stderr
    strategy = research([*args, "--strategy", "focused"], {"SLEUTH_SERVER_API_KEY": remote.key}, tmp_path)
    assert strategy.returncode == 2 and "--strategy cannot be used with --server" in strategy.stderr


def test_the_event_stream_is_read_as_the_protocol_frames_it() -> None:
    lines = [
        ": heartbeat",
        "event: packet",
        "id: 0",
        'data: {"a": 1}',
        "",
        ": heartbeat",
        "",
        "data: not a packet event",
        "",
        "event: packet",
        "data:{",
        "data: }",
        "",
    ]
    assert list(sse_data(lines)) == ['{"a": 1}', "{\n}"]


def test_a_forbidden_answer_is_the_refused_exit_code() -> None:
    forbidden = refusal(httpx.Response(403, json={"detail": "administrators only"}), with_key=True)
    assert forbidden.exit_code == EXIT_REFUSED and forbidden.message == "the server refused: administrators only"
    failing = refusal(httpx.Response(502, text="<html>bad gateway</html>"), with_key=True)
    assert failing.exit_code == 1 and failing.message == "the server answered 502: Bad Gateway"
