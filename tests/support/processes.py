"""`sleuth serve` and `sleuth worker` as processes of their own, for tests that kill or restart them:
forked from the test process's zygote (support/zygote.py), or, for a test of what a fresh
interpreter does, started from a command line of the test's."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx

from sleuth.cli.serve import WARMING
from support.zygote import ZygoteChild, zygote

STARTUP_S = 60.0
SERVE_ARGS = ["serve", "--host", "127.0.0.1", "--port", "0"]


class _Process:
    def __init__(self, args: list[str], env: dict[str, str], log: Path, command: list[str] | None = None) -> None:
        """`sleuth ARGS` forked from the zygote, or `command` run as a fresh interpreter would."""
        self.log_path = log
        self.proc: ZygoteChild | subprocess.Popen[bytes]
        if command is None:
            self.proc = zygote().spawn(args, env, log)
        else:
            with log.open("ab") as out:  # the child has its own copy of the file
                self.proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_until(self, check: Callable[[], bool], what: str) -> None:
        # Waiting for another process has nothing to await: poll, bounded.
        for _ in range(int(STARTUP_S / 0.05)):
            if self.proc.poll() is not None:
                raise RuntimeError(f"{what} exited: {self.log_path.read_text()[-3000:]}")
            if check():
                return
            try:
                self.proc.wait(0.05)
            except subprocess.TimeoutExpired:
                pass
        raise RuntimeError(f"{what} did not come up: {self.log_path.read_text()[-3000:]}")

    def stop(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(30)


class ServerProcess(_Process):
    """`sleuth serve` on a port of its choosing, returned once /api/health answers (or at once with
    `wait=False`: then `ready()` waits, so that several processes start together). `command`, given
    the port, is a command line to run instead, in a fresh interpreter."""

    def __init__(
        self,
        env: dict[str, str],
        log: Path,
        *,
        wait: bool = True,
        command: Callable[[int], list[str]] | None = None,
    ) -> None:
        self._env = env
        self._command = command  # the command line for a port
        self._start(log)
        if wait:
            self.ready()

    def _start(self, log: Path) -> None:
        # Port 0: the server binds a port no one holds and names it, so no other test's server can take
        # it between a look and the bind (and answer this one's health checks).
        self._written = log.stat().st_size if log.exists() else 0
        super().__init__(SERVE_ARGS, self._env, log, None if self._command is None else self._command(0))

    def ready(self) -> None:
        self.wait_until(lambda: self._bound() is not None, "server's port")
        self.port = self._bound() or 0
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.wait_until(self._healthy, "server")

    def _bound(self) -> int | None:
        found = re.search(rf"^{WARMING} port (\d+) ", self.log_path.read_text(errors="replace")[self._written :], re.M)
        return int(found.group(1)) if found else None

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.base_url}/api/health", timeout=1).status_code == 200
        except httpx.TransportError:
            return False


WORKER_READY = "worker ready"


class WorkerProcess(_Process):
    """`sleuth worker`, returned once it takes jobs (its log says so; or at once with `wait=False`,
    and `ready()` waits)."""

    def __init__(self, env: dict[str, str], log: Path, *, concurrency: int = 2, wait: bool = True) -> None:
        super().__init__(["worker", "--concurrency", str(concurrency)], env, log)
        if wait:
            self.ready()

    def ready(self) -> None:
        self.wait_until(lambda: WORKER_READY in self.log_path.read_text(errors="replace"), "worker")
