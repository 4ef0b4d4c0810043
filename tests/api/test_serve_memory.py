"""`sleuth serve`'s memory: the API process never loads litellm, even once its engine has run research;
the engine processes are forked from a fork server that loaded litellm, and share those pages; an
upload's extraction forks from that same fork server, not from another."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import httpx

from conftest import read_events, start_research
from support.processes import ServerProcess

# A bound on each exchange with a fresh `sleuth serve`, whose first run may wait for its engine's
# warm-up: on a loaded machine that alone can take tens of seconds.
TIMEOUT_S = 90
MIB = 1024 * 1024
HEAVY = ("litellm", "tiktoken", "openai")
LOADED = "heavy modules loaded:"

# `sleuth serve`, with a SIGUSR1 handler that writes which of HEAVY the API process has imported.
SERVE_AND_REPORT = f"""
import signal, sys
from sleuth.cli.main import run
def report(*_):
    print({LOADED!r}, sorted(m for m in {HEAVY!r} if m in sys.modules), flush=True)
signal.signal(signal.SIGUSR1, report)
sys.argv = ['sleuth', 'serve', '--host', '127.0.0.1', '--port', sys.argv[1]]
run()
"""


def _serve_and_report(port: int) -> list[str]:
    return [sys.executable, "-c", SERVE_AND_REPORT, str(port)]


def _children(pid: int) -> list[int]:
    return [
        int(child) for task in Path(f"/proc/{pid}/task").iterdir() for child in (task / "children").read_text().split()
    ]


def _rollup(pid: int) -> dict[str, int]:
    """/proc/PID/smaps_rollup's sizes, in bytes."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        fields[name] = int(rest.split()[0]) * 1024
    return fields


async def test_the_api_process_never_loads_litellm_and_its_children_share_one_fork_server(tmp_path: Path) -> None:
    env = {**os.environ, "SLEUTH_ENGINE_PROCESSES": "2"}
    log = tmp_path / "serve.log"
    server = ServerProcess(env, log, command=_serve_and_report)
    try:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=TIMEOUT_S) as client:
            run_id = await start_research(client, clarify=False)
            events = await read_events(client, run_id)
            page = ("notes.html", b"<html><body><p>Forked extraction works.</p></body></html>", "text/html")
            uploaded = await client.post("/api/collections/notes/documents", files=[("files", page)])
        server.proc.send_signal(signal.SIGUSR1)
        server.wait_until(lambda: LOADED in log.read_text(errors="replace"), "the API process's list of modules")
        fork_servers = [
            pid for pid in _children(server.pid) if b"forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]
        engines = [engine for fork_server in fork_servers for engine in _children(fork_server)]
        shared = [_rollup(engine)["Shared_Dirty"] for engine in engines]
    finally:
        server.stop(signal.SIGTERM)

    assert uploaded.status_code == 201, uploaded.text
    assert [json.loads(e.data)["obj"]["type"] for e in events[-1:]] == ["stop"]
    assert any(json.loads(e.data)["obj"]["type"] == "report" for e in events)  # an engine ran research
    line = next(line for line in log.read_text(errors="replace").splitlines() if line.startswith(LOADED))
    assert line == f"{LOADED} []"
    assert len(fork_servers) == 1 and len(engines) == 2
    # The heap the fork server built importing litellm is in each engine, shared: tens of MiB (an
    # engine spawned on its own shares next to none of its heap).
    assert all(size >= 50 * MIB for size in shared), shared
