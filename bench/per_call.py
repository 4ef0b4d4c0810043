"""CPU per model call and per streamed chunk through the gateway (prints figures; not a test).

    .venv/bin/python bench/per_call.py [--calls 40] [--tokens 200] [--profile]

The test kit's fake model (`sleuth_testkit.model.ScriptedLLM`), with no latency, runs in its own
process, so only the caller's CPU is counted. The caller makes `--calls` streamed calls through
`LLMGateway.complete` (litellm, the OpenAI SDK, HTTP on loopback), one after the other, each
answered with `--tokens` one-token chunks, and prints the process CPU (user+sys) per call and per
chunk, after two unmeasured calls that load what a first call loads. `--profile` prints the top
of a cProfile of the measured calls. CPU time still grows with the machine's load (shared caches,
hyperthreads): compare figures taken back to back, with the load average printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import multiprocessing
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loadavg import load_average  # noqa: E402
from sleuth.config import Settings  # noqa: E402
from sleuth.core import heavy  # noqa: E402
from sleuth.llm.gateway import LLMGateway  # noqa: E402
from sleuth_testkit.model import Reply, ScriptedLLM  # noqa: E402
from sleuth_testkit.scenarios import TOKEN_CHARS  # noqa: E402


def serve(tokens: int, url_out: Any, stop: Any) -> None:
    text = ("word " * tokens)[: tokens * TOKEN_CHARS]  # one chunk per token
    with ScriptedLLM(lambda body: Reply(text=text, chunk_size=TOKEN_CHARS)) as fake:
        url_out.send(fake.base_url)
        stop.wait()


async def calls(gateway: LLMGateway, count: int) -> None:
    for _ in range(count):
        await gateway.complete("report", [{"role": "user", "content": "write"}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    receiver, sender = multiprocessing.Pipe(duplex=False)
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(args.tokens, sender, stop), daemon=True)
    server.start()
    try:
        settings = Settings(model="openai/bench", api_base=receiver.recv(), api_key="sk-bench")
        heavy.load("litellm")
        gateway = LLMGateway(settings)
        asyncio.run(calls(gateway, 2))  # unmeasured: the first call's imports
        load_before = load_average()
        profiler = cProfile.Profile() if args.profile else None
        started = time.process_time()
        if profiler is not None:
            profiler.enable()
        asyncio.run(calls(gateway, args.calls))
        if profiler is not None:
            profiler.disable()
        cpu = time.process_time() - started
    finally:
        stop.set()
        server.join(5)
    chunks = args.calls * (args.tokens + 3)  # role chunk, tokens, finish, usage
    print(f"{args.calls} calls of {args.tokens} tokens: CPU {cpu / args.calls * 1000:.2f} ms per call,")
    print(f"  {cpu / chunks * 1e6:.0f} µs per chunk (all of a call's CPU over its chunks)")
    print(f"load average {load_before} before, {load_average()} after")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
