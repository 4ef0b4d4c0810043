"""Start-up A/B against another checkout: `sleuth --help`, a CLI run's first packet, a server's first run.

Both sides run with the offline model and the built-in corpus, each in its own data directory,
indexed by one unmeasured run before timing. The two sides alternate (A B, B A, ...) so both see the
same load, and every figure is measured from the spawn of the process:

  --help             `sleuth --help` -> its exit
  CLI first packet   `sleuth research --json --mode light --no-clarify QUESTION` -> its first stdout
                     line; also -> the first text a model streamed (litellm loaded and answering), and
                     the process's CPU at its first packet (the process is then killed: nothing a
                     run stores is written before its end)
  server first run   `sleuth serve` on a free port -> /api/health answers -> an engine is ready
                     (`engines_ready`, polled) -> a light research POSTed then -> its first SSE packet

It prints the median of each figure per side and after ÷ before, the ratio of each pair, and the
load average at the start and the end. It prints figures; nothing asserts them.

    PYTHONPATH=$PWD/backend .venv/bin/python bench/startup.py \\
        --before-sleuth /path/to/before/.venv/bin/sleuth [--pairs 10] [--only help|cli|server]

`--after-sleuth` defaults to this interpreter's `sleuth`; each side's `PYTHONPATH` is its
`--*-pythonpath` (after: this process's own), so a worktree can run with another checkout's venv.
Compare venvs with the same packages: an extra one can change what an import loads (httpx imports
rich and pygments when they are installed, as the `dev` extra does).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from sleuth_testkit.net import free_port

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
POLL_S = 0.01  # another process's state, with nothing to await: polled this often


@dataclass
class Side:
    name: str
    sleuth: str
    pythonpath: str | None
    data_dir: str

    def env(self) -> dict[str, str]:
        # Without PYTHONDONTWRITEBYTECODE: the unmeasured first run writes the bytecode caches a
        # user's installation has, and every measured run reads them.
        dropped = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_") and k not in dropped}
        env.update(SLEUTH_DATA_DIR=self.data_dir, SLEUTH_MODEL="offline", SLEUTH_SEARCH="local")
        env.update(NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        if self.pythonpath:
            env["PYTHONPATH"] = self.pythonpath
        return env


def research_command(side: Side) -> list[str]:
    return [side.sleuth, "research", "--json", "--mode", "light", "--no-clarify", QUESTION]


def index_once(side: Side) -> None:
    """One whole run, unmeasured: indexes the built-in corpus and warms the page cache."""
    done = subprocess.run(research_command(side), env=side.env(), cwd=side.data_dir, capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout:
        raise RuntimeError(f"{side.name}: sleuth research exited {done.returncode}: {done.stderr[-2000:]}")


def cpu_s(pid: int) -> float:
    """user + sys CPU seconds of a process so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cli_first_packet(side: Side) -> dict[str, float]:
    """The first packet, and the first text a model streamed (the first `*_delta` packet: litellm
    has loaded and answered), from the spawn; the CPU the process had used at its first packet."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        research_command(side), env=side.env(), cwd=side.data_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    figures: dict[str, float] = {}
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            now = time.perf_counter() - started
            if "first packet" not in figures:
                figures["first packet"] = now
                figures["CPU at first packet"] = cpu_s(proc.pid)
            if str(json.loads(line)["obj"]["type"]).endswith("_delta"):
                figures["first model text"] = now
                break
    finally:
        proc.kill()
        _, errors = proc.communicate()
    if "first model text" not in figures:
        raise RuntimeError(f"{side.name}: no model text: {errors.decode()[-2000:]}")
    return {key: figures[key] for key in ("first packet", "first model text", "CPU at first packet")}


def help_exit(side: Side) -> dict[str, float]:
    started = time.perf_counter()
    subprocess.run([side.sleuth, "--help"], env=side.env(), cwd=side.data_dir, stdout=subprocess.DEVNULL, check=True)
    return {"--help, spawn -> exit": time.perf_counter() - started}


def _health(client: httpx.Client) -> dict[str, int] | None:
    try:
        response = client.get("/api/health", timeout=1)
    except httpx.TransportError:
        return None
    return response.json() if response.status_code == 200 else None


def server_first_run(side: Side) -> dict[str, float]:
    port = free_port()
    command = [side.sleuth, "serve", "--port", str(port), "--log-level", "warning"]
    with tempfile.TemporaryFile() as log, httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        started = time.perf_counter()
        proc = subprocess.Popen(command, env=side.env(), cwd=side.data_dir, stdout=log, stderr=subprocess.STDOUT)
        try:
            figures: dict[str, float] = {}
            deadline = started + 120
            while time.perf_counter() < deadline:
                health = _health(client)
                if health is not None:
                    figures.setdefault("health answers", time.perf_counter() - started)
                    if health.get("engines_ready", 0) >= 1:
                        figures["an engine ready"] = time.perf_counter() - started
                        break
                if proc.poll() is not None:
                    break
                time.sleep(POLL_S)
            else:
                raise RuntimeError(f"{side.name}: no engine ready in 120 s")
            if proc.poll() is not None:
                raise RuntimeError(f"{side.name}: the server exited {proc.returncode}")
            posted = time.perf_counter()
            body = {"question": QUESTION, "mode": "light", "clarify": False}
            response = client.post("/api/research", json=body)
            if response.status_code != 202:
                raise RuntimeError(f"{side.name}: POST answered {response.status_code}: {response.text}")
            run_id = response.json()["run_id"]
            with client.stream("GET", f"/api/runs/{run_id}/events") as events:
                for line in events.iter_lines():
                    if line.startswith("data:"):
                        json.loads(line[5:])
                        break
            now = time.perf_counter()
            return {"first packet": now - started, **figures, "POST -> first packet": now - posted}
        except BaseException:
            log.seek(0)
            print(log.read().decode(errors="replace")[-3000:], file=sys.stderr)
            raise
        finally:
            proc.send_signal(signal.SIGTERM)  # a graceful stop: the next start finds no run to recover
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def ab(
    label: str, sides: tuple[Side, Side], pairs: int, measure: Callable[[Side], dict[str, float]]
) -> dict[str, list[dict[str, float]]]:
    results: dict[str, list[dict[str, float]]] = {side.name: [] for side in sides}
    for pair in range(pairs):
        order = sides if pair % 2 == 0 else sides[::-1]
        for side in order:
            results[side.name].append(measure(side))
        before, after = (next(iter(results[s.name][-1].values())) for s in sides)
        print(f"  {label} pair {pair + 1}: before {before:.3f} s, after {after:.3f} s; load {load_average()}")
    return results


def report(label: str, command: str, results: dict[str, list[dict[str, float]]], load: str) -> None:
    before, after = results["before"], results["after"]
    print(f"\n{label}: {command}")
    print(f"  median of {len(before)} pairs   before      after    after/before")
    for key in before[0]:
        b = statistics.median(run[key] for run in before)
        a = statistics.median(run[key] for run in after)
        print(f"  {key:<22} {b:7.3f} s  {a:7.3f} s     {a / b:.3f}")
    main = next(iter(before[0]))
    ratios = sorted(a[main] / b[main] for a, b in zip(after, before, strict=True))
    print(f"  {main}, ratio per pair (sorted): {' '.join(f'{r:.2f}' for r in ratios)}")
    print(f"  load average: {load} -> {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before-sleuth", required=True, help="the `sleuth` script of the other checkout's venv")
    parser.add_argument("--before-pythonpath", default=None)
    parser.add_argument("--after-sleuth", default=str(Path(sys.executable).with_name("sleuth")))
    parser.add_argument("--after-pythonpath", default=os.environ.get("PYTHONPATH"))
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--only", choices=["help", "cli", "server"], default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as before_dir, tempfile.TemporaryDirectory() as after_dir:
        sides = (
            Side("before", args.before_sleuth, args.before_pythonpath, before_dir),
            Side("after", args.after_sleuth, args.after_pythonpath, after_dir),
        )
        for side in sides:
            index_once(side)
        if args.only in (None, "help"):
            load = load_average()
            results = ab("--help", sides, args.pairs, help_exit)
            report("sleuth --help", "sleuth --help", results, load)
        if args.only in (None, "cli"):
            load = load_average()
            results = ab("CLI", sides, args.pairs, cli_first_packet)
            report("CLI first packet", " ".join(research_command(sides[1])[1:]), results, load)
        if args.only in (None, "server"):
            load = load_average()
            results = ab("server", sides, args.pairs, server_first_run)
            report("server first run", "sleuth serve; POST /api/research once an engine is ready", results, load)


if __name__ == "__main__":
    main()
