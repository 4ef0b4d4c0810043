"""Durations as people write them (`90s`, `5m`, `1h`, `1h30m`, `45`) and back."""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([hms]?)", re.I)
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "": 1.0}


def parse_duration(text: str) -> float:
    """Seconds in `text`; raises ValueError with a readable message when it is not a duration."""
    compact = text.strip().lower().replace(" ", "")
    parts = _PART.findall(compact)
    if not compact or "".join(number + unit for number, unit in parts) != compact:
        raise ValueError(f"{text!r} is not a duration; use e.g. 90s, 5m, 1h or 1h30m")
    if sum(1 for _, unit in parts if not unit) > (1 if len(parts) == 1 else 0):
        raise ValueError(f"{text!r} is not a duration; give each number a unit (h, m or s)")
    return sum(float(number) * _UNIT_S[unit] for number, unit in parts)


def format_duration(seconds: float) -> str:
    """`1h 5m`, `4m 10s`, `45s`: the two largest units, for progress lines."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m {secs}s" if secs else f"{minutes}m"
    return f"{secs}s"
