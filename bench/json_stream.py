"""The streaming JSON-string decoder (think_tool reasoning): time per decoded field (prints figures; not a test).

Run: .venv/bin/python bench/json_stream.py
"""

from __future__ import annotations

import json
import time

from sleuth.llm.json_stream import StreamingStringField

SENTENCE = 'Covered: "descriptors".\nMissing: \\ paths, émigré 😀 and \t tabs. '


def per_field_ms(raw: str, size: int, rounds: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        parser = StreamingStringField()
        for i in range(0, len(raw), size):
            parser.feed(raw[i : i + size])
    return (time.perf_counter() - start) / rounds * 1000


def main() -> None:
    for repeats in (15, 60):
        raw = json.dumps({"reasoning": SENTENCE * repeats})
        for size in (5, 24, 200):
            print(f"{len(raw):5d} chars in {size:3d}-char fragments: {per_field_ms(raw, size):6.2f} ms per field")


if __name__ == "__main__":
    main()
