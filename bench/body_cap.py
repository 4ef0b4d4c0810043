"""Server memory while a client sends an oversized chunked body (prints figures; not a test).

Starts `sleuth serve` on a free port with a temporary data dir, reads its peak RSS (VmHWM), sends a
100 MB `POST /api/research` body without Content-Length, and reads the peak again.

Run: .venv/bin/python bench/body_cap.py [--mb 100]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from sleuth_testkit.net import free_port


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args()
    port = free_port()
    sleuth = str(Path(sys.executable).with_name("sleuth"))
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "SLEUTH_DATA_DIR": data}
        server = subprocess.Popen([sleuth, "serve", "--port", str(port), "--log-level", "warning"], env=env)
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(600):
                try:
                    if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            before = peak_rss_mb(server.pid)

            def body() -> Iterator[bytes]:
                yield b'{"question": "'
                for _ in range(args.mb * 16):
                    yield b"x" * 65536

            started = time.perf_counter()
            response = httpx.post(
                f"{base}/api/research", content=body(), headers={"content-type": "application/json"}, timeout=120
            )
            elapsed = time.perf_counter() - started
            after = peak_rss_mb(server.pid)
            print(f"{args.mb} MB chunked body -> HTTP {response.status_code} {response.text} in {elapsed:.1f}s")
            print(f"server peak RSS: {before:.0f} MB before, {after:.0f} MB after (+{after - before:.0f} MB)")
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
