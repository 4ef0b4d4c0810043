"""What light and heavy mean: the limits a run works within, derived from the settings, and how
much each mode writes."""

from __future__ import annotations

from dataclasses import dataclass

from sleuth.config import Mode, Settings


@dataclass(frozen=True)
class ModeLimits:
    """The per-run limits that make a mode what it is."""

    max_cycles: int  # orchestrator turns
    agent_max_cycles: int  # research turns per agent
    lanes: int  # agents per orchestrator turn
    max_agents: int | None  # agents per run; None: only cycles x lanes
    plan_max_steps: int
    page_max_tokens: int  # page text shown to an agent
    search_results: int
    time_budget_s: float


def mode_limits(settings: Settings, mode: Mode, reasoning: bool) -> ModeLimits:
    """Heavy takes the settings as they are. Light is one round of short agents over a short plan.

    Light keeps every lane (parallel agents cost no wall time) but caps the run at one agent per
    plan step, gives each agent one search and one read, and shows it half as much page text, so
    it costs far fewer model calls, tokens and minutes than heavy.
    """
    cycles = settings.max_cycles or (4 if reasoning else 8)
    budget = settings.time_budget_for(mode)
    if mode == "light":
        plan_steps = max(1, min(settings.plan_max_steps, 3))
        return ModeLimits(
            max_cycles=max(2, cycles // 2),
            agent_max_cycles=min(settings.agent_max_cycles, 3),
            lanes=settings.max_parallel_agents,
            max_agents=plan_steps,
            plan_max_steps=plan_steps,
            page_max_tokens=max(128, settings.page_max_tokens // 2),
            search_results=max(1, min(settings.search_results, 4)),
            time_budget_s=budget,
        )
    return ModeLimits(
        max_cycles=cycles,
        agent_max_cycles=settings.agent_max_cycles,
        lanes=settings.max_parallel_agents,
        max_agents=None,
        plan_max_steps=settings.plan_max_steps,
        page_max_tokens=settings.page_max_tokens,
        search_results=settings.search_results,
        time_budget_s=budget,
    )


# Roughly what a reader of each mode expects: light is a focused answer, heavy an in-depth report.
REPORT_WORDS: dict[Mode, tuple[int, int]] = {"light": (800, 1500), "heavy": (2500, 5000)}


def intermediate_report_tokens(settings: Settings, mode: Mode) -> int:
    """The agents' report cap: the setting in heavy mode, half of it in light mode."""
    cap = settings.intermediate_report_max_tokens
    return cap if mode == "heavy" else max(64, cap // 2)
