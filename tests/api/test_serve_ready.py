"""`sleuth serve` says it warms up when its port opens and prints its address only once it can run
research: whoever reads the address and asks at once finds `/api/health` ready."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx

from sleuth.cli.serve import READY
from support.processes import ServerProcess


def test_the_address_is_printed_once_the_server_is_ready(tmp_path: Path) -> None:
    # As deployed: an engine in a process of its own, warming up while the server already answers.
    env = {**os.environ, "SLEUTH_ENGINE_PROCESSES": "1"}
    log = tmp_path / "serve.log"
    server = ServerProcess(env, log, wait=False)
    try:
        server.ready()  # /api/health answers: the port is open, the engine may still be warming up
        healths: list[bool] = []

        def announced() -> bool:
            # The log first, then health: an address printed before this look must find it ready.
            printed = READY in log.read_text(errors="replace")
            healths.append(httpx.get(f"{server.base_url}/api/health", timeout=5).json()["ready"])
            return printed

        server.wait_until(announced, "the ready line")
        assert healths[-1] is True
        lines = log.read_text(errors="replace").splitlines()
        warming = next(i for i, line in enumerate(lines) if line.startswith("Sleuth is warming up"))
        ready = next(i for i, line in enumerate(lines) if line.startswith(READY))
        assert warming < ready
        assert lines[ready].split()[3] == f"{server.base_url}/"
        assert not any("http://" in line for line in lines[:ready])  # no address before it can run research
    finally:
        server.stop(signal.SIGTERM)


def test_a_server_with_accounts_and_no_users_says_how_to_add_one(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    server = ServerProcess({**os.environ, "SLEUTH_AUTH": "accounts"}, log, wait=False)
    try:
        server.ready()
        server.wait_until(lambda: "sleuth user add NAME --admin" in log.read_text(errors="replace"), "the hint")
        assert httpx.get(f"{server.base_url}/api/sessions", timeout=5).status_code == 401
    finally:
        server.stop(signal.SIGTERM)
