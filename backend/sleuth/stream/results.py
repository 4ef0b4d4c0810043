"""What goes into a research run and what comes out of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from sleuth.config import Mode, Strategy
from sleuth.core.ids import new_id
from sleuth.stream.packets import (
    ChangeSet,
    KeyFinding,
    MethodNote,
    NumberedSource,
    RemovedCitation,
    StopReason,
    UnsupportedClaim,
)

Checker = Literal["overlap", "judge"]


class ClaimVerdict(BaseModel):
    """The check of one citation marker on one sentence of the final report."""

    marker: str
    occurrence: int = 1  # which appearance of `marker` in the report this is, from 1
    sentence: str
    supported: bool
    reason: str = ""
    score: float = 0.0
    checker: Checker = "overlap"
    passage: str = Field(default="", exclude=True)  # the cited document's best-matching passage, for a judge


def unsupported(verdicts: list[ClaimVerdict]) -> list[UnsupportedClaim]:
    """The failed verdicts, as the `report` packet lists them."""
    return [
        UnsupportedClaim(marker=v.marker, occurrence=v.occurrence, sentence=v.sentence, reason=v.reason)
        for v in verdicts
        if not v.supported
    ]


@dataclass
class ClarificationExchange:
    """Questions Sleuth asked and the user's answer to them."""

    questions: list[str]
    answer: str

    @property
    def questions_text(self) -> str:
        return "\n".join(f"{i}. {q}" for i, q in enumerate(self.questions, 1))


@dataclass
class PriorReport:
    """An earlier report in the same session, given as context to the clarifier and planner."""

    question: str
    markdown: str


@dataclass
class Followup:
    """The stored report a follow-up question is about: answered from it, without new research."""

    report_id: str
    question: str
    markdown: str
    sources: list[NumberedSource] = field(default_factory=list)


class SnapshotClaim(BaseModel):
    """A claim-checked sentence of a report and the URLs of the sources it cites."""

    sentence: str
    urls: list[str] = Field(default_factory=list)


class SnapshotSource(BaseModel):
    """A source a report cites: the hash of the text the run read, and that text in passages (for
    the passages a later run finds changed)."""

    url: str
    title: str = ""
    sha256: str
    passages: list[str] = Field(default_factory=list)


class Snapshot(BaseModel):
    """What a scheduled run found, kept with its report for the schedule's next run to compare with."""

    taken_at: str  # when the run ended (UTC ISO)
    report_id: str
    claims: list[SnapshotClaim] = Field(default_factory=list)
    sources: list[SnapshotSource] = Field(default_factory=list)


@dataclass
class ResearchRequest:
    question: str
    session_id: str = field(default_factory=lambda: new_id("s"))
    mode: Mode | None = None  # None: the settings' mode
    strategy: Strategy | None = None
    clarify: bool | None = None  # None: the settings' `clarify`
    time_budget_s: float | None = None  # None: the mode's default budget
    clarification: ClarificationExchange | None = None  # set when this message answers questions
    history: list[PriorReport] = field(default_factory=list)
    sources: list[str] | None = None  # source names to search (checked up front); None: the settings'
    # Whose run: it searches and opens only the local collections this user sees (the shared ones
    # and their own uploads), on whichever process or worker it runs. None: the built-in user of
    # `none` and `token` modes (and the CLI), who sees every collection.
    owner_id: str | None = None
    review_plan: bool = False  # wait for the user to approve, edit or revise the plan
    followup: Followup | None = None  # set: answer `question` from this report instead of researching
    report_id: str = field(default_factory=lambda: new_id("rep"))
    # A scheduled run: True, and the snapshot of the schedule's previous run when there is one. The
    # report then opens with what changed since, and the result keeps a snapshot of its own.
    scheduled: bool = False
    previous: Snapshot | None = None

    def mode_label(self, default: Mode) -> str:
        """The mode its `run_start` names: `followup` for a follow-up, else its own or `default`."""
        return "followup" if self.followup else (self.mode or default)


ResultStatus = Literal["completed", "error", "waiting_for_input"]


class ToolDocument(BaseModel):
    """The text of a document a tool call returned (an MCP result), as the run read it: kept with the
    run so the viewer opens it without calling the tool again."""

    id: str
    url: str
    title: str
    text: str


class ResearchResult(BaseModel):
    """The outcome of a run, as stored and as returned by the reports API."""

    status: ResultStatus
    stop_reason: StopReason
    report_id: str | None = None
    question: str
    title: str = ""
    summary: str = ""
    key_findings: list[KeyFinding] = Field(default_factory=list)
    markdown: str = ""
    sources: list[NumberedSource] = Field(default_factory=list)
    removed_citations: list[RemovedCitation] = Field(default_factory=list)
    # The claim-support verdict of every checked citation, for in-process callers (`sleuth eval`). Not
    # serialised: reports are stored without it, and the `report` packet carries the unsupported ones.
    claims: list[ClaimVerdict] = Field(default_factory=list, exclude=True)
    clarification_questions: list[str] = Field(default_factory=list)
    plan: list[str] = Field(default_factory=list)
    method: MethodNote | None = None
    error: str | None = None
    elapsed_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    # Stored beside the report (the store's `tool_documents`), not in it: the reports API leaves it out.
    tool_documents: list[ToolDocument] = Field(default_factory=list)
    # A scheduled run: what changed since the previous run (None for the first), and what this run
    # found, for the next one to compare with (the reports API leaves the snapshot out).
    changes: ChangeSet | None = None
    snapshot: Snapshot | None = None

    @property
    def unsupported_claims(self) -> list[UnsupportedClaim]:
        return unsupported(self.claims)
