"""Every packet type of the streaming protocol (docs/protocol.md) as pydantic models."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from sleuth.stream.documents import Document

StopReason = Literal["completed", "clarification", "cancelled", "error", "deadline"]
DegradedLevel = Literal[
    "agent_force_report",
    "agent_hard_timeout",
    "orchestrator_force_report",
    "report_timeout",
    "deadline",
    "plan_review_timeout",
    "output_cut",
    "tool_unavailable",
]


class Placement(BaseModel):
    """Where a packet sits in the timeline: block, parallel lane, and step inside an agent."""

    model_config = ConfigDict(frozen=True)

    turn_index: int = Field(ge=0)
    tab_index: int = Field(default=0, ge=0)
    sub_turn_index: int | None = Field(default=None, ge=0)


class _Obj(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceRouteInfo(BaseModel):
    """How the run's question routes its searches to one local collection."""

    name: str
    searched: bool = Field(description="Whether searches for this question go to the collection.")
    reason: str = Field(description="Why, in one short line (e.g. `fits: sqlite, pragma`).")


class RunStart(_Obj):
    type: Literal["run_start"] = "run_start"
    session_id: str
    question: str
    mode: str
    models: dict[str, str]
    time_budget_s: float | None = Field(default=None, description="The run's effective time budget (seconds).")
    sources: list[str] = Field(default_factory=list, description="The source names this run searches.")
    routes: list[SourceRouteInfo] = Field(
        default_factory=list,
        description="When the request chose no sources: which local collections fit the question and are"
        " searched, and which are left out, each with its reason. Empty when sources were chosen.",
    )


class Clarification(_Obj):
    type: Literal["clarification"] = "clarification"
    questions: list[str]


class PlanStart(_Obj):
    type: Literal["plan_start"] = "plan_start"
    content: str = ""


class PlanDelta(_Obj):
    type: Literal["plan_delta"] = "plan_delta"
    content: str


class PlanDone(_Obj):
    """Extension: the parsed plan steps, sent once the plan has streamed."""

    type: Literal["plan_done"] = "plan_done"
    steps: list[str]


class PlanReview(_Obj):
    """The run waits for the client to approve, edit or send feedback on these steps."""

    type: Literal["plan_review"] = "plan_review"
    steps: list[str]
    round: int = Field(default=1, ge=1, description="1 for the first plan, +1 per revision.")
    max_rounds: int = Field(default=1, ge=1, description="Feedback is accepted while round < max_rounds.")


class PlanReviewed(_Obj):
    """Extension: how the review ended; `steps` is the plan the research follows."""

    type: Literal["plan_reviewed"] = "plan_reviewed"
    outcome: Literal["approved", "edited", "revising", "timeout"]
    steps: list[str]


class ReasoningStart(_Obj):
    type: Literal["reasoning_start"] = "reasoning_start"
    reasoning: str = ""


class ReasoningDelta(_Obj):
    type: Literal["reasoning_delta"] = "reasoning_delta"
    reasoning: str


class ReasoningDone(_Obj):
    type: Literal["reasoning_done"] = "reasoning_done"
    reasoning: str = ""


class TopLevelBranching(_Obj):
    type: Literal["top_level_branching"] = "top_level_branching"
    num_parallel_branches: int = Field(ge=1)


class ResearchAgentStart(_Obj):
    type: Literal["research_agent_start"] = "research_agent_start"
    task: str


class SearchStart(_Obj):
    type: Literal["search_start"] = "search_start"
    provider: str


class SearchQueries(_Obj):
    type: Literal["search_queries"] = "search_queries"
    queries: list[str]


class SearchDocuments(_Obj):
    type: Literal["search_documents"] = "search_documents"
    documents: list[Document]


class OpenUrlStart(_Obj):
    type: Literal["open_url_start"] = "open_url_start"


class OpenUrlUrls(_Obj):
    type: Literal["open_url_urls"] = "open_url_urls"
    urls: list[str]


class OpenUrlDocuments(_Obj):
    type: Literal["open_url_documents"] = "open_url_documents"
    documents: list[Document]


class IntermediateReportStart(_Obj):
    type: Literal["intermediate_report_start"] = "intermediate_report_start"
    content: str = ""


class IntermediateReportDelta(_Obj):
    type: Literal["intermediate_report_delta"] = "intermediate_report_delta"
    content: str


class IntermediateReportCitedDocs(_Obj):
    type: Literal["intermediate_report_cited_docs"] = "intermediate_report_cited_docs"
    documents: list[Document]


class MessageStart(_Obj):
    type: Literal["message_start"] = "message_start"
    final_documents: list[Document] = Field(default_factory=list)


class MessageDelta(_Obj):
    type: Literal["message_delta"] = "message_delta"
    content: str


class CitationInfo(_Obj):
    type: Literal["citation_info"] = "citation_info"
    citation_number: int = Field(ge=1)
    document_id: str
    url: str
    title: str


class RemovedCitation(BaseModel):
    marker: str
    reason: str


class UnsupportedClaim(BaseModel):
    """A citation whose sentence the cited document(s) do not appear to support."""

    marker: str
    sentence: str
    reason: str
    occurrence: int = Field(default=1, ge=1, description="Which appearance of `marker` in the markdown, from 1.")


class NumberedSource(Document):
    """A document with its citation number in the final report."""

    number: int = Field(ge=1)


class KeyFinding(BaseModel):
    """One headline finding of a report, with the report's citation numbers that support it."""

    text: str
    citations: list[int] = Field(default_factory=list)


class MethodNote(BaseModel):
    """How the report was made, counted by the engine (never written by a model)."""

    sources_found: int = Field(ge=0)
    sources_read: int = Field(ge=0)
    blocked_credibility: int = Field(default=0, ge=0)
    blocked_ssrf: int = Field(default=0, ge=0)
    failed_reads: int = Field(default=0, ge=0)
    sources_cited: int = Field(ge=0)
    citations_removed: int = Field(default=0, ge=0)
    claims_checked: int = Field(default=0, ge=0, description="Citations the claim check judged.")
    claims_unsupported: int = Field(default=0, ge=0)
    cycles_used: int = Field(default=0, ge=0)
    max_cycles: int = Field(default=0, ge=0)
    time_budget_s: float = Field(ge=0)
    elapsed_s: float = Field(ge=0)
    degraded: list[str] = Field(default_factory=list, description="`degraded` levels that fired, in order.")
    question_coverage: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Share of the question's subject words in the cited sentences the claim check did not flag;"
        " null when the question has none this can read.",
    )
    on_subject_share: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Share of the checked cited sentences whose source's title names what the question asks about;"
        " null when nothing tells the sources apart.",
    )
    uncited_subject_title: str | None = Field(
        default=None,
        description="The title of a page the run found but did not cite that names more of what the question"
        " asks about than any cited page's title; null when a cited page is titled as closely.",
    )
    opening_cited: bool | None = Field(
        default=None,
        description="Whether the report's first paragraph holds a cited sentence the claim check did not flag;"
        " null when the report has no paragraph.",
    )
    steps_planned: int = Field(default=0, ge=0, description="Steps of the research plan.")
    steps_covered: int = Field(
        default=0,
        ge=0,
        description="Plan steps whose agents cited something and whose subject the checked sentences cover.",
    )
    steps_empty: list[int] = Field(
        default_factory=list, description="The 1-based plan steps whose agents found nothing."
    )
    confidence: Literal["high", "medium", "low"]
    confidence_reason: str = Field(description="Why the confidence is what it is, in one line of plain text.")
    text: str = Field(description="The note as markdown; it is also the end of the report's markdown.")


class SourceChange(BaseModel):
    """A source that is new, gone, or whose text changed since the schedule's previous run."""

    status: Literal["new", "gone", "changed"]
    url: str
    title: str = ""
    number: int | None = Field(default=None, description="Its citation number in this report; none when gone.")
    added: list[str] = Field(default_factory=list, description="Passages of its text that were not there before.")
    removed: list[str] = Field(default_factory=list, description="Passages of its text that are no longer there.")


class ClaimChange(BaseModel):
    """A claim (a cited sentence) that is new, dropped, or changed since the schedule's previous run."""

    status: Literal["new", "dropped", "changed"]
    sentence: str = Field(description="The claim as this report makes it (dropped: as the previous one did).")
    previous: str | None = Field(default=None, description="Changed: the claim as the previous report made it.")
    label: Literal["updated", "contradicted"] | None = Field(
        default=None, description="Changed, when a model confirmed the pair: new details, or the opposite."
    )
    numbers: list[int] = Field(default_factory=list, description="Its citation numbers in this report.")
    urls: list[str] = Field(default_factory=list, description="The URLs of the sources it cites.")


class ChangeCounts(BaseModel):
    sources_new: int = 0
    sources_gone: int = 0
    sources_changed: int = 0
    sources_unchanged: int = 0
    claims_new: int = 0
    claims_dropped: int = 0
    claims_changed: int = 0
    claims_unchanged: int = 0


class ChangeSet(BaseModel):
    """What a scheduled run found different from its schedule's previous run (docs/schedules.md)."""

    since: str = Field(description="When the previous run ended (UTC ISO).")
    previous_report_id: str
    changed: bool = Field(description="Whether anything is new, gone, dropped or changed.")
    counts: ChangeCounts
    sources: list[SourceChange] = Field(default_factory=list)
    claims: list[ClaimChange] = Field(default_factory=list)
    matched_by: Literal["deterministic", "model"] = Field(
        default="deterministic",
        description="How changed claims were found: shared citations and sentence similarity, then (`model`) "
        "confirmed by the report model.",
    )


class Changes(ChangeSet, _Obj):
    """Sent once, just before `report`, by a scheduled run that has a previous run to compare with."""

    type: Literal["changes"] = "changes"


class Report(_Obj):
    type: Literal["report"] = "report"
    report_id: str
    title: str = ""
    summary: str = ""
    key_findings: list[KeyFinding] = Field(default_factory=list)
    markdown: str
    sources: list[NumberedSource]
    removed_citations: list[RemovedCitation] = Field(default_factory=list)
    unsupported_claims: list[UnsupportedClaim] = Field(default_factory=list)
    method: MethodNote | None = None
    changes: ChangeSet | None = Field(
        default=None, description="A scheduled run's diff with its previous run (also the `changes` packet)."
    )


class Progress(_Obj):
    type: Literal["progress"] = "progress"
    processed_tasks: int = Field(ge=0)
    total_tasks: int = Field(ge=0)
    time_left_s: float | None = Field(default=None, description="Seconds of the time budget left.")


class Usage(_Obj):
    type: Literal["usage"] = "usage"
    role: str
    model: str
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cost_usd: float = Field(ge=0)


class Degraded(_Obj):
    type: Literal["degraded"] = "degraded"
    level: DegradedLevel
    detail: str


class Error(_Obj):
    type: Literal["error"] = "error"
    message: str
    recoverable: bool


class SectionEnd(_Obj):
    type: Literal["section_end"] = "section_end"


class Summary(_Obj):
    type: Literal["summary"] = "summary"
    elapsed_s: float = Field(ge=0)
    sources_seen: int = Field(ge=0)
    sources_fetched: int = Field(ge=0)
    sources_cited: int = Field(ge=0)
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cost_usd: float = Field(ge=0)
    report_id: str | None = None
    claims_checked: int = Field(default=0, ge=0)
    claims_unsupported: int = Field(default=0, ge=0)


class Stop(_Obj):
    type: Literal["stop"] = "stop"
    reason: StopReason


PacketObj = Annotated[
    RunStart
    | Clarification
    | PlanStart
    | PlanDelta
    | PlanDone
    | PlanReview
    | PlanReviewed
    | ReasoningStart
    | ReasoningDelta
    | ReasoningDone
    | TopLevelBranching
    | ResearchAgentStart
    | SearchStart
    | SearchQueries
    | SearchDocuments
    | OpenUrlStart
    | OpenUrlUrls
    | OpenUrlDocuments
    | IntermediateReportStart
    | IntermediateReportDelta
    | IntermediateReportCitedDocs
    | MessageStart
    | MessageDelta
    | CitationInfo
    | Changes
    | Report
    | Progress
    | Usage
    | Degraded
    | Error
    | SectionEnd
    | Summary
    | Stop,
    Field(discriminator="type"),
]


class Packet(BaseModel):
    """One placed, numbered event of a run. `seq` is also the SSE id."""

    seq: int = Field(ge=0)
    run_id: str
    placement: Placement
    obj: PacketObj


packet_adapter: TypeAdapter[Packet] = TypeAdapter(Packet)


def packet_json_schema() -> dict[str, Any]:
    """JSON Schema of a packet as sent (with the union of every `obj` type), for other clients.

    Packets are serialised with every field, defaults included, so every property is required.
    """
    schema = Packet.model_json_schema(mode="serialization")
    for model in [schema, *schema.get("$defs", {}).values()]:
        if "properties" in model:
            model["required"] = list(model["properties"])
    return schema


def parse_packet(data: str | bytes | dict[str, Any]) -> Packet:
    """Validate a packet from JSON text or a dict."""
    if isinstance(data, dict):
        return Packet.model_validate(data)
    return Packet.model_validate_json(data)
