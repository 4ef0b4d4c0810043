"""Starting and stopping `sleuth serve` for the browser tests."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sleuth.cli.serve import WARMING
from support.zygote import ZygoteChild, zygote

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
DIST = FRONTEND / "dist"
SLEUTH = Path(sys.executable).parent / "sleuth"


# --------------------------------------------------------------------------- the built UI


def _check_dist() -> None:
    index = DIST / "index.html"
    if not index.is_file():
        pytest.fail(
            f"The web UI is not built ({index} is missing). Build it first: cd frontend && npm ci && npm run build",
            pytrace=False,
        )
    built = index.stat().st_mtime
    sources = [p for p in (FRONTEND / "src").rglob("*") if p.is_file()] + [FRONTEND / "index.html"]
    stale = [p for p in sources if p.is_file() and p.stat().st_mtime > built + 1]
    if stale:
        pytest.fail(
            f"The web UI build in {DIST} is older than {stale[0].relative_to(ROOT)};"
            " rebuild it: cd frontend && npm run build",
            pytrace=False,
        )


# --------------------------------------------------------------------------- servers


@dataclass
class Server:
    name: str
    base_url: str
    data_dir: Path
    log_path: Path
    process: ZygoteChild
    env: dict[str, str] = field(default_factory=dict)

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def start_server(name: str, root: Path, extra_env: dict[str, str]) -> Server:
    """`sleuth serve` (forked from the test process's zygote) on a free port with its own data dir;
    returns once /api/health says every engine has warmed up, or fails once the process has exited.
    No wall-clock limit: the start-up runs the checks, and each engine builds its search tools
    (seconds; minutes on a loaded machine). A browser test's ceilings are for what the UI does; a
    run sent before an engine is warm would spend them waiting for the warm-up. A server that
    cannot start exits. Its engine runs on a thread of the server (`SLEUTH_ENGINE_PROCESSES=0`)
    unless `extra_env` asks for processes: the browser sees the same API either way, and each
    engine process is one more import of litellm."""
    _check_dist()
    data_dir = root / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env.update(
        SLEUTH_DATA_DIR=str(data_dir),
        SLEUTH_WEB_DIST=str(DIST),
        SLEUTH_ENGINE_PROCESSES="0",
        PYTHONUNBUFFERED="1",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    env.update(extra_env)
    log_path = root / "server.log"
    log_path.write_bytes(b"")
    args = ["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "warning"]
    process = zygote().spawn(args, env, log_path, root)
    server = Server(name, "", data_dir, log_path, process, env)
    while True:
        if process.poll() is not None:
            pytest.fail(f"sleuth serve ({name}) exited with {process.returncode}:\n{server.log_tail()}", pytrace=False)
        # Port 0, then the port the server names: no other server can take it between a look and the bind.
        bound = re.search(rf"^{WARMING} port (\d+) ", server.log_tail(1 << 20), re.M)
        if bound is not None:
            server.base_url = f"http://127.0.0.1:{bound.group(1)}"
            try:
                with urllib.request.urlopen(f"{server.base_url}/api/health", timeout=2) as response:
                    health = json.loads(response.read())
                    if response.status == 200 and health["engines_ready"] >= health["engines"]:
                        return server
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.1)  # between polls, an exit ends the wait at once


def stop_server(server: Server) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=5)
