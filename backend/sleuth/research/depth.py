"""How much each mode writes: the final report's word target and the agents' report cap."""

from __future__ import annotations

from sleuth.config import Mode, Settings

# Roughly what a reader of each mode expects: light is a focused answer, heavy an in-depth report.
REPORT_WORDS: dict[Mode, tuple[int, int]] = {"light": (800, 1500), "heavy": (2500, 5000)}


def intermediate_report_tokens(settings: Settings, mode: Mode) -> int:
    """The agents' report cap: the setting in heavy mode, half of it in light mode."""
    cap = settings.intermediate_report_max_tokens
    return cap if mode == "heavy" else max(64, cap // 2)
