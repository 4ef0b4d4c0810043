"""The machine-readable part of every prompt, declared once.

Each step's prompt ends with one `<sleuth_facts>` block: the values the step depends on (caps,
cycle counters, plan, task, budgets, the clarification answer) as JSON validated against the
model below. Templates write it with the `facts` global; readers (the offline model, tests)
get it back with `read_facts`. Long texts that must not be repeated (agents' findings, the
sources an agent read) are wrapped with the `tagged` filter and read with `read_tagged`.
The prose around these blocks can be reworded freely: nothing reads prose back.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

FACTS_TAG = "sleuth_facts"


class PromptFacts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Clarification(PromptFacts):
    """The clarifying questions asked and the user's answer to them."""

    questions: list[str]
    answer: str


class ClarifyFacts(PromptFacts):
    step: Literal["clarify"] = "clarify"
    earlier_questions: list[str]  # questions of earlier reports in the session


class PlanFacts(PromptFacts):
    step: Literal["plan"] = "plan"
    question: str
    max_steps: int
    clarification: Clarification | None
    earlier_questions: list[str]


class OrchestratorFacts(PromptFacts):
    step: Literal["orchestrator"] = "orchestrator"
    question: str
    clarification: Clarification | None
    plan: list[str]
    max_parallel: int  # research_agent calls run per turn
    max_cycles: int


class OrchestratorTurnFacts(PromptFacts):
    step: Literal["orchestrator_turn"] = "orchestrator_turn"
    cycle: int  # 1-based
    max_cycles: int
    time_left_s: float
    uncovered_steps: list[int]  # 1-based plan steps without a cited finding yet
    attempts: dict[int, int]  # plan step -> agents that ran for it


class AgentFacts(PromptFacts):
    step: Literal["agent"] = "agent"
    max_cycles: int


class AgentTurnFacts(PromptFacts):
    step: Literal["agent_turn"] = "agent_turn"
    cycle: int  # 1-based
    max_cycles: int
    time_left_s: float


class AgentReportFacts(PromptFacts):
    step: Literal["agent_report"] = "agent_report"
    task: str
    max_tokens: int
    forced: bool


class FindingFacts(PromptFacts):
    model_config = ConfigDict(extra="ignore", frozen=True)  # built from the engine's richer findings

    task: str
    plan_step: int | None


class SourceFacts(PromptFacts):
    model_config = ConfigDict(extra="ignore", frozen=True)  # built from the engine's numbered sources

    number: int
    title: str


class ReportFacts(PromptFacts):
    step: Literal["report"] = "report"
    question: str
    clarification: Clarification | None
    mode: Literal["light", "heavy"]
    plan: list[str]
    findings: list[FindingFacts]  # bodies: the `finding` tagged blocks, in the same order
    min_words: int
    max_words: int
    max_tokens: int
    partial: bool
    sources: list[SourceFacts] = Field(default_factory=list)  # the numbers the findings cite, with titles


class ArtifactFacts(PromptFacts):
    step: Literal["artifact"] = "artifact"
    question: str
    clarification: Clarification | None
    findings: list[FindingFacts]  # bodies: the `finding` tagged blocks, in the same order


Facts = Annotated[
    ClarifyFacts
    | PlanFacts
    | OrchestratorFacts
    | OrchestratorTurnFacts
    | AgentFacts
    | AgentTurnFacts
    | AgentReportFacts
    | ReportFacts
    | ArtifactFacts,
    Field(discriminator="step"),
]
_ADAPTER: TypeAdapter[Facts] = TypeAdapter(Facts)
_BLOCK = re.compile(rf"<{FACTS_TAG}>\s*(\{{.*?\}})\s*</{FACTS_TAG}>", re.S)
F = TypeVar("F", bound=PromptFacts)


def _plain(value: Any) -> Any:
    """Engine objects (dataclasses with the same fields) as plain data for validation."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def facts(step: str, **values: Any) -> str:
    """The facts block for `step`; a missing, misspelt or mistyped value raises."""
    model = _ADAPTER.validate_python({"step": step, **{key: _plain(value) for key, value in values.items()}})
    return f"<{FACTS_TAG}>{model.model_dump_json()}</{FACTS_TAG}>"


def read_all_facts(text: str) -> list[Facts]:
    """Every valid facts block in `text`, in order; malformed blocks are skipped."""
    found: list[Facts] = []
    for match in _BLOCK.finditer(text):
        try:
            found.append(_ADAPTER.validate_python(json.loads(match.group(1))))
        except ValueError:
            continue
    return found


def read_facts(texts: list[str], kind: type[F]) -> F | None:
    """The last block of type `kind` across `texts` (a conversation's messages, oldest first)."""
    latest: F | None = None
    for text in texts:
        for block in read_all_facts(text):
            if isinstance(block, kind):
                latest = block
    return latest


def _neutralise(body: str, name: str) -> str:
    # a page or a model may write our closing tag; it must not end the block early
    return re.sub(rf"</?\s*{re.escape(name)}\b", lambda m: m.group(0).replace("<", "&lt;"), body, flags=re.I)


def _attribute(value: int | str) -> str:
    return re.sub(r'["<>]', "", str(value))  # attributes are short ids; nothing may break the tag


def tagged(body: Any, name: str, **attrs: int | str) -> str:
    """`body` wrapped as `<name k="v">...</name>` (a Jinja filter: `{% filter tagged("finding", n=1) %}`)."""
    rendered = " ".join(f'{key}="{_attribute(value)}"' for key, value in attrs.items())
    opening = f"<{name} {rendered}>" if rendered else f"<{name}>"
    return f"{opening}\n{_neutralise(str(body).strip(), name)}\n</{name}>"


def read_tagged(text: str, name: str) -> list[tuple[dict[str, str], str]]:
    """(attributes, body) of every `<name ...>` block in `text`, in order."""
    pattern = re.compile(rf"<{re.escape(name)}((?:\s+\w+=\"[^\"]*\")*)\s*>\n?(.*?)\n?</{re.escape(name)}>", re.S)
    return [(dict(re.findall(r'(\w+)="([^"]*)"', match.group(1))), match.group(2)) for match in pattern.finditer(text)]
