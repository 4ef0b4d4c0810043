"""Append-only JSON-lines output: a rerun adds what is missing and never rewrites what was written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def written_ids(path: Path) -> set[str]:
    """Ids of the complete lines in `path` (a line torn by a crash is ignored)."""
    return {str(record["id"]) for record in read_lines(path) if "id" in record}


def append_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON object as a line and sync it to disk, so a crash loses at most the line in flight."""
    with path.open("a+b") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")  # finish a line torn by an earlier crash; don't glue onto it
        handle.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every complete JSON object in `path`."""
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            out.append(data)
    return out
