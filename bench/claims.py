"""How long the deterministic claim check adds to a report, over the articles of a `sleuth eval` run.

    .venv/bin/python bench/claims.py OUT_DIR      (OUT_DIR from `sleuth eval ... --out OUT_DIR`, local corpus sources)

Prints the CPU time the check takes per report (median and worst) and per citation: CPU time, because
wall time on a shared machine mostly measures the other processes. Not asserted anywhere.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sleuth.config import Settings
from sleuth.research.report.claims import check_claims
from sleuth.tools.local.providers import build_local_tools

_SOURCE = re.compile(r"^\[(\d+)\] .* — (corpus://\S+)$", re.M)


async def _read(urls: set[str], data_dir: Path) -> dict[str, str]:
    _, reader = build_local_tools(Settings(data_dir=data_dir))
    return {url: (await reader.read(url)).text for url in sorted(urls)}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    articles = [json.loads(line) for line in (Path(sys.argv[1]) / "articles.jsonl").read_text().splitlines()]
    reports = []
    for article in articles:
        body, _, sources = article["article"].partition("\n## Sources\n")
        reports.append((body, {int(n): url for n, url in _SOURCE.findall(sources)}))
    with tempfile.TemporaryDirectory() as data_dir:
        texts = asyncio.run(_read({u for _, s in reports for u in s.values()}, Path(data_dir)))
    times: list[float] = []
    checked = 0
    for body, sources in reports:
        started = time.process_time()
        checked += len(check_claims(body, {n: texts[u] for n, u in sources.items()}))
        times.append(time.process_time() - started)
    print(f"{len(reports)} reports, {checked} citations checked")
    print(f"per report: median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms")
    print(f"per citation: {sum(times) / max(1, checked) * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
