"""Which plan step a task serves, which steps are still uncovered, and each mode's report caps."""

from __future__ import annotations

from sleuth.config import Settings
from sleuth.research.lanes.turns import coverage, plan_step_of
from sleuth.research.modes import REPORT_WORDS, intermediate_report_tokens
from sleuth.research.state import Finding

PLAN = ["How descriptors work", "How __getattr__ is used", "Pitfalls of __slots__"]


def finding(step: int | None, report: str, status: str = "done") -> Finding:
    return Finding(task="t", report=report, tab_index=0, turn_index=1, status=status, plan_step=step)


def test_the_declared_step_wins_when_it_is_a_real_step() -> None:
    assert plan_step_of("anything at all", 3, PLAN) == 3
    for bad in (0, 4, True, "2", None):
        assert plan_step_of("Find out how __getattr__ is used by modules", bad, PLAN) == 2


def test_a_task_without_a_step_is_matched_by_its_words_or_is_a_new_lead() -> None:
    assert plan_step_of("Explain how descriptors work in CPython 3.12.", None, PLAN) == 1
    assert plan_step_of("List common pitfalls when classes use __slots__.", None, PLAN) == 3
    assert plan_step_of("Compare the GIL in PyPy and CPython.", None, PLAN) is None


def test_a_step_is_covered_only_by_a_finished_finding_that_cites_something() -> None:
    findings = [
        finding(1, "Descriptors define __get__ [1]."),
        finding(2, "Nothing citable here."),
        finding(3, "Slots save memory [2].", status="failed"),
        finding(None, "A new lead [3]."),
    ]
    uncovered, attempts = coverage(PLAN, findings)
    assert uncovered == [2, 3] and attempts == {1: 1, 2: 1, 3: 1}


def test_light_mode_writes_less_than_heavy() -> None:
    settings = Settings(intermediate_report_max_tokens=4000)
    assert intermediate_report_tokens(settings, "heavy") == 4000
    assert intermediate_report_tokens(settings, "light") == 2000
    assert REPORT_WORDS["light"][1] < REPORT_WORDS["heavy"][0]
