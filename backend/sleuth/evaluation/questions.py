"""The question file: one JSON object per line, DeepResearch Bench's `{id, prompt}` plus optional gold data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator


class EvalInputError(ValueError):
    """A question file that cannot be used; the message names the file and line."""


def alternatives(item: str | list[str]) -> list[str]:
    """A gold source's or key fact's alternatives: any one of them counts."""
    return [item] if isinstance(item, str) else item


class EvalQuestion(BaseModel):
    """One question. Unknown fields (DRB's `topic`, `language`) are accepted and ignored."""

    model_config = ConfigDict(extra="ignore")

    id: str | int
    prompt: str = Field(min_length=1)
    # A gold source, like a key fact, is a string or a list of alternatives: copies of one page.
    gold_sources: list[str | list[str]] = Field(default_factory=list)
    key_facts: list[str | list[str]] = Field(default_factory=list)
    # Whether changes to Sleuth may be tuned on this question ("tune") or not ("heldout"); None: unmarked.
    split: Literal["tune", "heldout"] | None = None

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the prompt is empty")
        return value.strip()

    @field_validator("gold_sources", "key_facts")
    @classmethod
    def _not_empty(cls, value: list[str | list[str]], info: ValidationInfo) -> list[str | list[str]]:
        for item in value:
            if not alternatives(item) or not all(a.strip() for a in alternatives(item)):
                raise ValueError(f"{'a gold source' if info.field_name == 'gold_sources' else 'a key fact'} is empty")
        return value

    @property
    def key(self) -> str:
        """The id as compared when resuming (DRB uses integers, others strings)."""
        return str(self.id)


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def load_questions(path: Path) -> list[EvalQuestion]:
    """Every question in `path`; blank lines are skipped. Raises EvalInputError naming the bad line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise EvalInputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalInputError(f"{path}: cannot be read ({exc})") from None
    questions: list[EvalQuestion] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalInputError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise EvalInputError(f"{path}:{number}: expected a JSON object with `id` and `prompt`")
        try:
            question = EvalQuestion.model_validate(data)
        except ValidationError as exc:
            raise EvalInputError(f"{path}:{number}: {_describe(exc)}") from None
        if question.key in seen:
            raise EvalInputError(f"{path}:{number}: id {question.key!r} repeats line {seen[question.key]}")
        seen[question.key] = number
        questions.append(question)
    if not questions:
        raise EvalInputError(f"{path}: no questions")
    return questions
