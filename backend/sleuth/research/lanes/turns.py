"""Where research stands, as each turn tells the model: time left and which plan steps have findings."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sleuth.research.state import Finding

_WORD = re.compile(r"[^\W_]{3,}|\w*_\w*", re.U)


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(text)}


def plan_step_of(task: str, declared: object, plan: Sequence[str]) -> int | None:
    """The 1-based plan step a task serves: the model's `plan_step` when valid, else the step the
    task quotes, else the step most of whose words the task shares; None for a new lead."""
    if isinstance(declared, int) and not isinstance(declared, bool) and 1 <= declared <= len(plan):
        return declared
    lowered = task.lower()
    quoted = [i for i, step in enumerate(plan, 1) if step.strip() and step.lower() in lowered]
    if quoted:
        return quoted[0]
    task_words = _words(task)
    best, best_share = None, 0.5
    for number, step in enumerate(plan, 1):
        step_words = _words(step)
        share = len(task_words & step_words) / len(step_words) if step_words else 0.0
        if share > best_share:
            best, best_share = number, share
    return best


def coverage(plan: Sequence[str], findings: Sequence[Finding]) -> tuple[list[int], dict[int, int]]:
    """(plan steps without a cited finding, agents run per plan step)."""
    covered: set[int] = set()
    attempts: dict[int, int] = {}
    for finding in findings:
        if finding.plan_step is None:
            continue
        attempts[finding.plan_step] = attempts.get(finding.plan_step, 0) + 1
        if finding.cited:
            covered.add(finding.plan_step)
    return [n for n in range(1, len(plan) + 1) if n not in covered], attempts
