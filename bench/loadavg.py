"""The load average the benchmarks print beside their figures (wall and even CPU times grow with it)."""

from __future__ import annotations

import os


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, e.g. "0.61 0.80 0.90"."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
