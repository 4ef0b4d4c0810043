"""`sleuth` commands as processes forked from one that has already imported them.

Every `sleuth serve` or `sleuth worker` a test starts would otherwise import litellm and the research
code again, seconds of CPU each, which is most of what a scale-out or restart test costs. The zygote
is a plain `python` process (this file run as a script) that imports what those commands import, as
the engines' fork server does, then forks one child per command on request. A child is an ordinary
process of its own: its own pid, environment, working directory and log, killed with a real signal,
and it runs the console script's entry point with its arguments. What a fresh interpreter does at
start-up (what it imports, and when) is tested on real subprocesses, not through this.

One zygote per test process, started on first use; it reaps its children and reports their exit
status, and when the test process goes away (its end of the pipe closes) it kills what is left.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import IO, Any

from sleuth.cli.main import run
from sleuth.runs import warmup

# ------------------------------------------------------------------------------ the test's side


class ZygoteChild:
    """A forked command, with the part of `subprocess.Popen`'s interface the tests use."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self._zygote = zygote
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.ask({"poll": self.pid})["returncode"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._zygote.ask({"wait": self.pid, "timeout": timeout})["returncode"]
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    def __init__(self) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith("SLEUTH_")}
        self._process = subprocess.Popen(
            # -P: this folder's modules (support/mcp.py) must not hide the libraries of the same name
            [sys.executable, "-P", __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self._lock = threading.Lock()
        self.ask({"ready": True})

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._process.stdin is not None and self._process.stdout is not None
        with self._lock:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the zygote exited ({self._process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer

    def spawn(self, args: list[str], env: dict[str, str], log: Path, cwd: Path | None = None) -> ZygoteChild:
        """`sleuth ARGS` with exactly `env`, stdout and stderr appended to the file `log`, which
        exists once this returns (the child opens it only when it runs)."""
        log.touch()
        request = {"args": args, "env": env, "log": str(log), "cwd": str(cwd or Path.cwd())}
        return ZygoteChild(self, self.ask({"spawn": request})["pid"])


@functools.cache
def zygote() -> Zygote:
    return Zygote()


# ------------------------------------------------------------------------------ the zygote's side


def _preload() -> None:
    warmup.load_shared()  # what every engine loads alike: imports and compiling only, no thread
    for module in ("sleuth.cli.main", "sleuth.cli.serve", "sleuth.cli.worker", "sleuth.api.app"):
        importlib.import_module(module)
    if threading.active_count() != 1:  # a fork copies only the forking thread: nothing may run beside it
        raise RuntimeError(f"importing started threads: {threading.enumerate()}")


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become `sleuth ARGS` and never return."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        sys.argv = ["sleuth", *request["args"]]
        run()  # exits the process with the command's code
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


_ended: dict[int, int] = {}  # the exit codes of the children reaped so far


def _status(pid: int, block: bool) -> int | None:
    try:
        done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return _ended.get(pid)
    if done == 0:
        return None
    _ended[pid] = os.waitstatus_to_exitcode(status)  # a signal as its negative number, as Popen says
    return _ended[pid]


def _wait(pid: int, timeout: float | None) -> int | None:
    if timeout is not None and _status(pid, block=False) is None:
        try:
            ended = os.pidfd_open(pid)  # readable once the process has ended
        except ProcessLookupError:
            pass
        else:
            try:
                select.select([ended], [], [], timeout)
            finally:
                os.close(ended)
        return _status(pid, block=False)
    return _status(pid, block=True)


def _serve(requests: IO[str], answers: IO[str]) -> None:
    children: list[int] = []
    for line in requests:
        request = json.loads(line)
        try:
            if "spawn" in request:
                answers.flush()
                pid = os.fork()
                if pid == 0:
                    _child(request["spawn"])
                children.append(pid)
                answer: dict[str, Any] = {"pid": pid}
            elif "poll" in request:
                answer = {"returncode": _status(request["poll"], block=False)}
            elif "wait" in request:
                answer = {"returncode": _wait(request["wait"], request["timeout"])}
            else:
                answer = {"ready": True}
        except Exception as exc:
            answer = {"error": repr(exc)}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
    for pid in children:  # the test process is gone: so is everything it started
        if _status(pid, block=False) is None:
            os.kill(pid, signal.SIGKILL)
            _status(pid, block=True)


if __name__ == "__main__":
    _preload()
    _serve(sys.stdin, sys.stdout)
