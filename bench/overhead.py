"""What the engine adds to the model's own time, for a whole `sleuth research --json` process (prints figures).

Starts the test kit's fake model with a fixed latency per call (`sleuth_testkit.model.ScriptedLLM`
playing `sleuth_testkit.scenarios.BenchModel`: 16 model calls, 6 searches over the built-in local
corpus, 3 parallel lanes, token-by-token streams), runs the CLI as a subprocess, and prints per
latency (min / median / max over the runs):

  overhead ratio     wall from the first model request to the `stop` packet
                     / the time at least one model call was in flight (printed with the
                     number of model calls: a run that gains a call is not comparable)
  span               first model request -> `stop` packet
  last byte -> stop  the endpoint's last byte of the run's last model call -> `stop` packet
  report -> stop     the final report's last token read -> `stop` packet (`--timeline` splits it:
                     the report call's `usage` packet, the `report` packet, `stop`; `bench/tail.py`
                     splits it inside the engine)
  calls after report model calls that arrived after the final report's stream ended: each
                     one is a model latency on the critical path
  first packet       launch -> first packet on stdout
  first request      launch -> first model request at the endpoint
  peak RSS           of the process tree (sampled, and the kernel's high-water mark)
  user CPU           of the process tree (wait4)
  model calls        requests the endpoint answered

It also times `sleuth --help`, and runs once with asyncio's debug mode reporting every callback
that holds the event loop for 20 ms or more (SLEUTH_SLOW_CALLBACK_MS), and prints the longest.
`--timeline` prints the model calls of each latency's median run, with the time no call was in
flight before each one: where the overhead ratio's excess is spent; where the artifact call (title,
summary, key findings) sits against the final report's; and, for the final report and the agents'
reports, how long after the endpoint sent a stream's last byte the run emitted its last token (the
client still parsing chunks). `--instant-artifact` also runs each latency with the artifact call
answered at once, and prints the span over that run's span: what the artifact step costs the run.

`--against DIR` also runs each measured run with another checkout's `backend/` on PYTHONPATH,
interleaved with this checkout's, so both see the same load, and prints its rows after these.

Run: .venv/bin/python bench/overhead.py [--latency 0.3 1.0] [--runs 3] [--timeline] [--instant-artifact]
     [--against OTHER/backend]
Wall figures depend on the machine's load; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402
from sleuth_testkit.model import CallRecord, ScriptedLLM  # noqa: E402
from sleuth_testkit.scenarios import BenchModel  # noqa: E402

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
SLOW_CALLBACK = re.compile(r"Executing (.*) took (\d+\.\d+) seconds")
# The packets that carry a streamed answer's text, by the fake endpoint's name for the call.
DELTA_STEPS = {"message_delta": "report", "intermediate_report_delta": "agent_report"}
TARGETS = {
    "overhead ratio": {0.3: 1.05, 1.0: 1.02},
    "report's last token -> stop (ms)": {1.0: 150.0},
    "launch -> first packet (s)": 1.0,
    "launch -> first model request (s)": 2.0,
    "peak RSS (MiB)": 200.0,
    "user CPU (s)": 2.0,
}


@dataclass
class RunFigures:
    ratio: float
    first_packet_s: float
    first_request_s: float
    peak_rss_mib: float
    user_cpu_s: float
    model_calls: int
    slow_callbacks: list[tuple[float, str]] = field(default_factory=list)  # seconds, what ran
    calls: list[CallRecord] = field(default_factory=list)
    stop_at: float = 0.0  # when the `stop` packet was read
    last_token_at: dict[str, float] = field(default_factory=dict)  # step -> when its last text delta was read
    # after the report's last token: when the report call's usage, the `report` packet and `stop` were read
    tail_at: dict[str, float] = field(default_factory=dict)

    @property
    def first_request(self) -> float:
        return min(c.arrived for c in self.calls)

    @property
    def span_s(self) -> float:
        return self.stop_at - self.first_request

    @property
    def report_to_stop_s(self) -> float:
        return self.stop_at - self.last_token_at["report"]

    @property
    def last_byte_to_stop_s(self) -> float:
        """From the endpoint's last byte of any call to `stop`: the report's tail, whether or not the
        client's reading of the report's stream trailed the endpoint."""
        return self.stop_at - max(c.finished for c in self.calls)

    @property
    def report_call(self) -> CallRecord:
        return max((c for c in self.calls if c.step == "report"), key=lambda c: c.arrived)

    @property
    def calls_after_report(self) -> int:
        return sum(1 for c in self.calls if c.arrived >= self.report_call.finished)


def busy_seconds(calls: list[CallRecord]) -> float:
    """Length of the union of the calls' in-flight intervals."""
    total, end = 0.0, float("-inf")
    for call in sorted(calls, key=lambda c: c.arrived):
        start, stop = max(call.arrived, end), call.finished
        if stop > start:
            total += stop - start
        end = max(end, stop)
    return total


def _tree(pid: int) -> list[int]:
    pids, queue = [], [pid]
    while queue:
        current = queue.pop()
        pids.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                queue += [int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return pids


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class RssSampler(threading.Thread):
    """The process tree's summed RSS every 20 ms, keeping the peak."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kib, self.done = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            self.peak_kib = max(self.peak_kib, sum(_rss_kib(p) for p in _tree(self.pid)))


def sleuth_command() -> list[str]:
    exe = Path(sys.executable).with_name("sleuth")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "sleuth"]


def _env(base_url: str, data_dir: str, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env.update(
        SLEUTH_MODEL="openai/bench",
        SLEUTH_API_BASE=base_url,
        SLEUTH_API_KEY="sk-bench",
        SLEUTH_DATA_DIR=data_dir,
        SLEUTH_SEARCH="local",
        SLEUTH_CLARIFY="true",
        SLEUTH_MAX_PARALLEL_AGENTS="3",
        NO_PROXY="127.0.0.1",
        no_proxy="127.0.0.1",
    )
    env.update(extra)
    return env


def _check_packets(packets: list[dict[str, object]]) -> None:
    seqs = [p["seq"] for p in packets]
    if seqs != list(range(len(packets))):
        raise RuntimeError("packet seq is not 0, 1, 2, ... without gaps")
    stops = [p for p in packets if isinstance(p["obj"], dict) and p["obj"].get("type") == "stop"]
    if len(stops) != 1 or stops[0] is not packets[-1]:
        raise RuntimeError("the run did not end with exactly one stop")
    reason = packets[-1]["obj"]["reason"]  # type: ignore[index]
    if reason != "completed":
        errors = [p["obj"] for p in packets if p["obj"].get("type") == "error"]  # type: ignore[union-attr]
        raise RuntimeError(f"the run stopped with {reason}: {errors}")


def run_once(
    latency: float, data_dir: str, extra_env: dict[str, str] | None = None, *, instant_artifact: bool = False
) -> RunFigures:
    steps = {"artifact": 0.0} if instant_artifact else {}
    fake_model = ScriptedLLM(BenchModel(), latency_s=latency, step_latency_s=steps)
    with fake_model as fake, tempfile.TemporaryFile("w+") as stderr:
        env = _env(fake.base_url, data_dir, extra_env or {})
        command = [*sleuth_command(), "research", QUESTION, "--mode", "heavy", "--json"]
        packets: list[dict[str, object]] = []
        stamps: list[float] = []
        launched = time.perf_counter()
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
        sampler = RssSampler(proc.pid)
        sampler.start()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                stamps.append(time.perf_counter())
                packets.append(json.loads(line))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        reader.join(10)
        sampler.done.set()
        sampler.join()
        stderr.seek(0)
        errors = stderr.read()
        if proc.returncode != 0 or not packets:
            raise RuntimeError(f"sleuth exited {proc.returncode}: {errors[-2000:]}")
        _check_packets(packets)
        calls = list(fake.calls)
    first_request = min(c.arrived for c in calls)
    stop_at = stamps[-1]
    last_token_at: dict[str, float] = {}
    for packet, stamp in zip(packets, stamps, strict=True):
        step = DELTA_STEPS.get(str(packet["obj"]["type"]))  # type: ignore[index]
        if step is not None:
            last_token_at[step] = stamp
    after = [(p["obj"], t) for p, t in zip(packets, stamps, strict=True) if t >= last_token_at.get("report", stop_at)]
    # the report call's usage: of the report model's calls after its last token (the artifact's too), the longest
    usages = [(obj, t) for obj, t in after if obj["type"] == "usage" and obj["role"] == "report"]  # type: ignore[index]
    tail_at = {"usage": max(usages, key=lambda u: u[0]["output_tokens"])[1]} if usages else {}  # type: ignore[index]
    tail_at.update({obj["type"]: t for obj, t in after if obj["type"] in ("report", "stop")})  # type: ignore[index]
    return RunFigures(
        ratio=(stop_at - first_request) / busy_seconds(calls),
        first_packet_s=stamps[0] - launched,
        first_request_s=first_request - launched,
        peak_rss_mib=max(sampler.peak_kib, usage.ru_maxrss) / 1024,
        user_cpu_s=usage.ru_utime,
        model_calls=len(calls),
        slow_callbacks=[(float(seconds), what) for what, seconds in SLOW_CALLBACK.findall(errors)],
        calls=calls,
        stop_at=stop_at,
        last_token_at=last_token_at,
        tail_at=tail_at,
    )


def print_timeline(run: RunFigures) -> None:
    """Each model call (from its arrival to its last byte, from the first call's arrival) and the
    time before it when no call was in flight."""
    calls = sorted(run.calls, key=lambda c: c.arrived)
    start, end = calls[0].arrived, calls[0].arrived
    for call in calls:
        idle = max(0.0, call.arrived - end)
        span = f"{call.arrived - start:6.3f} -> {call.finished - start:6.3f} s"
        print(f"    {call.step:<14} {span}   idle before {idle * 1000:5.0f} ms")
        end = max(end, call.finished)
    print(
        f"    stop packet    {run.stop_at - start:6.3f} s              idle before {(run.stop_at - end) * 1000:5.0f} ms"
    )
    report = run.report_call
    for artifact in (c for c in calls if c.step == "artifact"):
        print(
            f"    artifact call: asked {(artifact.arrived - report.arrived) * 1000:+.0f} ms from the report's request, "
            f"done {(artifact.finished - report.finished) * 1000:+.0f} ms from the report's last byte"
        )
    print(f"    report's last token -> stop: {run.report_to_stop_s * 1000:.0f} ms")
    last = run.last_token_at["report"]
    parts = ", ".join(f"{name} +{(at - last) * 1000:.0f}" for name, at in run.tail_at.items())
    print(f"    after the report's last token (packets as read, ms): {parts}")
    # How far the client's parsing of a long stream trails the endpoint's sending of it.
    for step, read_at in run.last_token_at.items():
        sent_at = max(c.finished for c in calls if c.step == step)
        print(f"    {step}: last token read {(read_at - sent_at) * 1000:.0f} ms after the endpoint sent the last byte")


def help_figures(runs: int) -> tuple[list[float], list[float]]:
    """Wall and user CPU of `sleuth --help`."""
    walls, cpus = [], []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.Popen([*sleuth_command(), "--help"], stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
        walls.append(time.perf_counter() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return walls, cpus


def spread(values: list[float], digits: int = 2) -> str:
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


def calls_of(runs: list[RunFigures]) -> str:
    counts = sorted({r.model_calls for r in runs})
    return f"{'-'.join(str(c) for c in counts)} model calls"


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, nargs="+", default=[0.3, 1.0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--help-runs", type=int, default=5)
    parser.add_argument("--no-loop-check", action="store_true", help="skip the asyncio debug-mode run")
    parser.add_argument("--timeline", action="store_true", help="print the calls of each latency's median run")
    parser.add_argument(
        "--instant-artifact", action="store_true", help="also run each latency with the artifact call answered at once"
    )
    parser.add_argument(
        "--against",
        metavar="BACKEND_DIR",
        help="also run each measured run with another checkout's backend/ (on PYTHONPATH), interleaved",
    )
    args = parser.parse_args()
    print(f"load average at start: {load_average()}")
    with tempfile.TemporaryDirectory() as data_dir:
        run_once(0.0, data_dir)  # unmeasured: builds the local corpus index and warms the page cache
        results: dict[float, list[RunFigures]] = {}
        instant: dict[float, list[RunFigures]] = {}
        against: dict[float, list[RunFigures]] = {}
        for latency in args.latency:
            results[latency], instant[latency], against[latency] = [], [], []
            for _ in range(args.runs):
                results[latency].append(run_once(latency, data_dir))
                print(f"  {latency:.1f} s run {len(results[latency])}: load {load_average()}", file=sys.stderr)
                if args.instant_artifact:  # interleaved, so both sets see the same load
                    instant[latency].append(run_once(latency, data_dir, instant_artifact=True))
                if args.against:
                    against[latency].append(run_once(latency, data_dir, {"PYTHONPATH": args.against}))
        blocks = None
        if not args.no_loop_check:
            blocks = run_once(0.3, data_dir, {"SLEUTH_SLOW_CALLBACK_MS": "20"}).slow_callbacks
    help_walls, help_cpus = help_figures(args.help_runs)
    load_end = load_average()

    rows: list[tuple[str, Callable[[RunFigures], float], int]] = [
        ("overhead ratio", lambda r: r.ratio, 3),
        ("span: first request -> stop (s)", lambda r: r.span_s, 2),
        ("report's last token -> stop (ms)", lambda r: r.report_to_stop_s * 1000, 0),
        ("last model byte -> stop (ms)", lambda r: r.last_byte_to_stop_s * 1000, 0),
        ("model calls after the report", lambda r: r.calls_after_report, 0),
        ("launch -> first packet (s)", lambda r: r.first_packet_s, 2),
        ("launch -> first model request (s)", lambda r: r.first_request_s, 2),
        ("peak RSS (MiB)", lambda r: r.peak_rss_mib, 0),
        ("user CPU (s)", lambda r: r.user_cpu_s, 2),
    ]
    print(f"\nsleuth research --mode heavy --json, {args.runs} runs per latency (min / median / max)")
    sides = [("", results)] + ([(f" (against {args.against})", against)] if args.against else [])
    for side, latency, runs in ((side, lat, runs) for side, of in sides for lat, runs in of.items()):
        print(f"\nlatency {latency:.1f} s per model call{side}")
        for name, get, digits in rows:
            values = [float(get(r)) for r in runs]
            target = TARGETS.get(name)
            if isinstance(target, dict):
                target = target.get(latency)
            note = f"  target <= {target}: {verdict(statistics.median(values), target)}" if target else ""
            if name == "overhead ratio":
                note = f"  ({calls_of(runs)}){note}"
            print(f"  {name:<36} {spread(values, digits)}{note}")
        if instant[latency] and not side:
            span = statistics.median(r.span_s for r in runs)
            base = statistics.median(r.span_s for r in instant[latency])
            print(
                f"  {'span / span, artifact answered at once':<36} {span / base:.3f} "
                f"({span:.2f} / {base:.2f} s, medians; {calls_of(runs)} / {calls_of(instant[latency])})"
                f"  target <= 1.02: {verdict(span / base, 1.02)}"
            )
        if args.timeline:
            median_run = sorted(runs, key=lambda r: r.ratio)[len(runs) // 2]
            print(f"  timeline of the median run (ratio {median_run.ratio:.3f}):")
            print_timeline(median_run)
    print(
        f"\nsleuth --help: wall {spread(help_walls)} s, CPU {spread(help_cpus)} s"
        f"  target wall <= 0.2: {verdict(statistics.median(help_walls), 0.2)}"
    )
    if blocks is not None:
        longest = max((seconds for seconds, _ in blocks), default=0.0)
        print(
            f"event-loop blocks >= 20 ms (asyncio debug mode, one 0.3 s run): {len(blocks)}, "
            f"longest {longest * 1000:.0f} ms  target none over 20 ms: {verdict(longest, 0.020)}"
        )
        for seconds, what in sorted(blocks, reverse=True)[:5]:
            print(f"  {seconds * 1000:6.0f} ms  {what[:150]}")
    print(f"load average at end: {load_end}")


if __name__ == "__main__":
    main()
