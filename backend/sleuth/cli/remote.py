"""`sleuth research --server URL`: the run happens on a Sleuth server, through its REST API, and is
shown here as a local run is (the same progress lines and report, or `--json`'s packet lines).

The run is started with `POST /api/research` and followed on its SSE stream
(`GET /api/runs/{id}/events`), each packet parsed into the typed packet models; an answer to
clarifying questions is the session's next message, as in the web UI. The API key (the caller's own,
or a `token` server's shared token) comes from the environment, never from an argument, and is never
printed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import httpx
from pydantic import ValidationError

from sleuth.cli.answers import answer_questions, exit_failed
from sleuth.cli.json_lines import JsonLines
from sleuth.cli.progress import ProgressPrinter
from sleuth.config import Mode
from sleuth.stream.emitter import PacketSink
from sleuth.stream.packets import parse_packet

SERVER_ENV = "SLEUTH_SERVER_URL"
KEY_ENV = "SLEUTH_SERVER_API_KEY"
KEY_FILE_ENV = "SLEUTH_SERVER_API_KEY_FILE"
EXIT_REFUSED = 3
EXIT_NOT_FOUND = 4
TIMEOUT = httpx.Timeout(30.0)
STREAM_TIMEOUT = httpx.Timeout(30.0, read=300.0)  # the server sends a heartbeat far more often


class ServerRefused(click.ClickException):
    """The server said no, or could not be reached: one line for the user (exit 1)."""


class KeyRefused(ServerRefused):
    """401 or 403: no API key, a wrong one, or one not allowed this."""

    exit_code = EXIT_REFUSED


class NotOnServer(ServerRefused):
    """404 (or 405): not a Sleuth server's API at this address, or a run that is not the caller's."""

    exit_code = EXIT_NOT_FOUND


@dataclass(frozen=True)
class RemoteOptions:
    """What `sleuth research` asks the server for, in the REST API's names."""

    mode: Mode | None = None
    clarify: bool | None = None
    time_budget_s: float | None = None
    sources: list[str] | None = None

    def body(self) -> dict[str, Any]:
        chosen = {"mode": self.mode, "clarify": self.clarify, "time_budget_s": self.time_budget_s}
        return {name: value for name, value in {**chosen, "sources": self.sources}.items() if value is not None}


def server_key(environ: Mapping[str, str] = os.environ) -> str | None:
    """The API key from SLEUTH_SERVER_API_KEY or the file SLEUTH_SERVER_API_KEY_FILE names; None without
    either (a server without accounts needs none). What is wrong is said without the key."""
    key, path = environ.get(KEY_ENV, "").strip(), environ.get(KEY_FILE_ENV, "").strip()
    if key and path:
        raise click.UsageError(f"set {KEY_ENV} or {KEY_FILE_ENV}, not both")
    if path:
        try:
            key = Path(path).expanduser().read_text(encoding="utf-8").strip()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise click.ClickException(f"cannot read the API key file {path} ({KEY_FILE_ENV}): {reason}") from None
        except UnicodeDecodeError:
            raise click.ClickException(f"the API key file {path} ({KEY_FILE_ENV}) is not text") from None
        if not key:
            raise click.ClickException(f"the API key file {path} ({KEY_FILE_ENV}) is empty")
    if key and not (key.isascii() and key.isprintable() and " " not in key):
        where = f"the file {path}" if path else KEY_ENV
        raise click.ClickException(f"{where} does not hold an API key (one word, as the server showed it)")
    return key or None


def server_url(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise click.UsageError(f"--server ({SERVER_ENV}) must be an http:// or https:// URL")
    return url.rstrip("/")


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The `data` of each `packet` event of an SSE stream, given its lines (comments and heartbeats skipped)."""
    event, data = "message", list[str]()
    for line in lines:
        if not line:
            if data and event == "packet":
                yield "\n".join(data)
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)


def refusal(response: httpx.Response, *, with_key: bool) -> ServerRefused:
    """What a failed answer means to the user of this command."""
    detail = _detail(response)
    status = response.status_code
    if status == 401 and not with_key:
        return KeyRefused(f"the server needs an API key ({detail}): set {KEY_ENV} or {KEY_FILE_ENV}")
    if status == 401:
        return KeyRefused(f"the server refused the API key: {detail}")
    if status == 403:
        return KeyRefused(f"the server refused: {detail}")
    if status in (404, 405):  # 405: a web server, but not Sleuth's API, at this address
        return NotOnServer(f"not found on the server: {detail} (is --server the address of a Sleuth server?)")
    return ServerRefused(f"the server answered {status}: {detail}")


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response.reason_phrase or "no reason given"
    if isinstance(body, dict):
        for name in ("message", "detail"):  # a 422's `message` is one sentence; its `detail` a list
            if isinstance(body.get(name), str):
                return str(body[name])
    return response.reason_phrase or "no reason given"


class Server:
    """One Sleuth server, as this command talks to it."""

    def __init__(self, url: str, key: str | None) -> None:
        self.url = server_url(url)
        self._with_key = key is not None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(base_url=self.url, headers=headers, timeout=TIMEOUT)

    def close(self) -> None:
        self._client.close()

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ServerRefused(f"cannot reach the server at {self.url} ({type(exc).__name__})") from None
        if response.is_error:
            raise refusal(response, with_key=self._with_key)
        return response

    def _object(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """A JSON object answer, or a refusal: a page that is not one is not a Sleuth server's."""
        try:
            found = self._send(method, path, **kwargs).json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            found = None
        if not isinstance(found, dict):
            raise NotOnServer(f"{self.url} does not answer as a Sleuth server (is --server its address?)")
        return found

    def start(self, question: str, options: RemoteOptions) -> dict[str, Any]:
        """A new session and its first run: `{run_id, session_id, …}`."""
        return self._object("POST", "/api/research", json={"question": question, **options.body()})

    def answer(self, session_id: str, content: str, options: RemoteOptions) -> dict[str, Any]:
        """The session's next message (the answer to its clarifying questions) and the run it starts."""
        body = {"content": content, **options.body()}
        return self._object("POST", f"/api/sessions/{session_id}/messages", json=body)

    def run(self, run_id: str) -> dict[str, Any]:
        return self._object("GET", f"/api/runs/{run_id}")

    def session_url(self, session_id: str) -> str:
        """The session in the server's web UI."""
        return f"{self.url}/#/s/{session_id}"

    def follow(self, run_id: str, session_id: str, sink: PacketSink) -> None:
        """Give the run's packets to `sink`, from its first to its `stop`."""
        try:
            with self._client.stream("GET", f"/api/runs/{run_id}/events", timeout=STREAM_TIMEOUT) as response:
                if response.is_error:
                    response.read()
                    raise refusal(response, with_key=self._with_key)
                for data in sse_data(response.iter_lines()):
                    try:
                        packet = parse_packet(data)
                    except ValidationError:
                        continue  # a packet type of a newer server: nothing this version can show
                    sink(packet)
        except httpx.HTTPError as exc:
            raise ServerRefused(
                f"lost the connection to the server ({type(exc).__name__}); the run goes on there: "
                f"{self.session_url(session_id)}"
            ) from None

    def export(self, report_id: str, fmt: str) -> bytes:
        return self._send("GET", f"/api/reports/{report_id}.{fmt}", timeout=STREAM_TIMEOUT).content

    def cancel(self, run_id: str) -> None:
        """Ask the server to stop the run; whether it could is not this command's concern any more."""
        try:
            self._client.post(f"/api/runs/{run_id}/cancel", timeout=5.0)
        except httpx.HTTPError:
            pass


def research_on_server(
    server: Server,
    question: str,
    options: RemoteOptions,
    *,
    as_json: bool,
    answer: str | None,
    output: tuple[str, str] | None,
) -> None:
    """`sleuth research` on `server`; exits as the local command does (0 for a report or questions).
    `output`: a file to write the report to, and its format (the server renders it)."""
    printer = ProgressPrinter(sys.stdout, sys.stderr, color=sys.stderr.isatty())
    sink: PacketSink = JsonLines(sys.stdout) if as_json else printer
    try:
        run = _run(server, question, options, sink, as_json=as_json, answer=answer)
        if run is not None:
            _finish(server, run, as_json=as_json, printer=printer, output=output)
    finally:
        server.close()


def _run(
    server: Server, question: str, options: RemoteOptions, sink: PacketSink, *, as_json: bool, answer: str | None
) -> dict[str, Any] | None:
    """The last run, once its stream has ended; None when it asked questions that are not answered here."""
    run_id: str | None = None
    try:
        created = server.start(question, options)
        run_id, session_id = str(created["run_id"]), str(created["session_id"])
        server.follow(run_id, session_id, sink)
        run = server.run(run_id)
        if run["status"] != "waiting_for_input":
            return run
        answer = answer_questions(run.get("clarification_questions") or [], answer, as_json=as_json)
        if answer is None:
            return None
        run_id = str(server.answer(session_id, answer, options)["run_id"])
        server.follow(run_id, session_id, sink)
        return server.run(run_id)
    except KeyboardInterrupt:
        if run_id is not None:
            server.cancel(run_id)  # as Ctrl-C stops a local run
        click.echo("cancelled", err=True)
        sys.exit(130)


def _finish(
    server: Server, run: dict[str, Any], *, as_json: bool, printer: ProgressPrinter, output: tuple[str, str] | None
) -> None:
    if run["status"] in ("error", "cancelled"):
        exit_failed(printer, run.get("error") or run.get("stop_reason"), as_json=as_json)
    report_id = run.get("report_id")
    if run["status"] != "completed" or not report_id:
        return
    if not as_json:
        click.echo(f"Report {report_id} is on the server: {server.session_url(run['session_id'])}", err=True)
    if output is not None:
        path, fmt = output
        body = server.export(report_id, fmt)
        try:
            Path(path).write_bytes(body)
        except OSError as exc:
            raise click.ClickException(f"could not write {path}: {exc.strerror or exc}") from None
        if not as_json:
            click.echo(f"Report written to {path}", err=True)
