"""`sleuth serve` and `sleuth worker` as real subprocesses, for tests that kill or restart them."""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx

from sleuth_testkit.net import free_port

STARTUP_S = 60.0
BIND_ATTEMPTS = 3


def sleuth_command(*args: str) -> list[str]:
    """`sleuth ARGS`; `python -m sleuth ARGS` (the same click group) if the console script cannot load."""
    return [*_sleuth(), *args]


@functools.cache
def _sleuth() -> tuple[str, ...]:
    # Asked once per test process: the answer holds for the whole run.
    script = Path(sys.executable).parent / "sleuth"
    if script.exists() and subprocess.run([script, "--help"], capture_output=True).returncode == 0:
        return (str(script),)
    return (sys.executable, "-m", "sleuth")


def serve_command(port: int) -> list[str]:
    return sleuth_command("serve", "--host", "127.0.0.1", "--port", str(port))


class _Process:
    def __init__(self, command: list[str], env: dict[str, str], log: Path) -> None:
        self.log_path = log
        self._log = log.open("ab")
        self.proc = subprocess.Popen(command, env=env, stdout=self._log, stderr=subprocess.STDOUT)

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
        self._log.close()


class ServerProcess(_Process):
    """`sleuth serve` on a free port, returned once /api/health answers (or at once with `wait=False`:
    then `ready()` waits, so that several processes start together)."""

    def __init__(
        self,
        env: dict[str, str],
        log: Path,
        *,
        wait: bool = True,
        command: Callable[[int], list[str]] = serve_command,
    ) -> None:
        self._env = env
        self._command = command  # the command line for a port
        self._start(log)
        if wait:
            self.ready()

    def _start(self, log: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._written = log.stat().st_size if log.exists() else 0
        super().__init__(self._command(self.port), self._env, log)

    def ready(self) -> None:
        # A free port is only free until someone binds it: another worker's server may take it between
        # the look and the bind. That ends this server at once, and another port is tried.
        for attempt in range(BIND_ATTEMPTS):
            try:
                self.wait_until(self._healthy, "server")
                return
            except RuntimeError:
                self._log.close()
                taken = "address already in use" in self.log_path.read_text(errors="replace")[self._written :]
                if not taken or attempt == BIND_ATTEMPTS - 1:
                    raise
                self._start(self.log_path)

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
        super().__init__(sleuth_command("worker", "--concurrency", str(concurrency)), env, log)
        if wait:
            self.ready()

    def ready(self) -> None:
        self.wait_until(lambda: WORKER_READY in self.log_path.read_text(errors="replace"), "worker")
