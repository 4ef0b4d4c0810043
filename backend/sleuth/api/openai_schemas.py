"""The OpenAI-compatible chat API's request and response bodies, in OpenAI's own shapes.

Requests are read leniently (chat clients send fields Sleuth has no use for, such as
`temperature`, and they are ignored), responses are built to the shapes the official clients parse.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sleuth.config import MAX_TIME_BUDGET_S, MIN_TIME_BUDGET_S, Mode
from sleuth.core.text import has_visible_text

OPENAI_PREFIX = "/v1/"

# The models a chat client can pick, each a research mode.
MODELS: dict[str, Mode] = {"sleuth": "heavy", "sleuth-heavy": "heavy", "sleuth-light": "light"}


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None

    @property
    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(part.text for part in self.content if part.type == "text" and part.text)
        return self.content or ""


class SleuthOptions(BaseModel):
    """What a chat request can say about the research, as the extra body field `sleuth`."""

    model_config = ConfigDict(extra="forbid")

    time_budget_s: float | None = Field(default=None, ge=MIN_TIME_BUDGET_S, le=MAX_TIME_BUDGET_S)
    sources: list[str] | None = Field(default=None, max_length=100)
    clarify: bool | None = None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str
    messages: list[ChatMessage] = Field(min_length=1, max_length=1000)
    stream: bool = False
    max_completion_tokens: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    metadata: dict[str, str] | None = None
    sleuth: SleuthOptions | None = None

    @field_validator("messages")
    @classmethod
    def _ends_with_a_question(cls, messages: list[ChatMessage]) -> list[ChatMessage]:
        if messages[-1].role != "user" or not has_visible_text(messages[-1].text):
            raise ValueError("the last message must be the user's, with text")
        return messages

    @model_validator(mode="before")
    @classmethod
    def _options_from_metadata(cls, data: Any) -> Any:
        """Clients that can only set `metadata` give the `sleuth` options there, as strings; they are
        read (and refused) as the `sleuth` field would be."""
        if not isinstance(data, dict) or data.get("sleuth") is not None or not isinstance(data.get("metadata"), dict):
            return data
        meta = data["metadata"]
        named = {key: meta[key] for key in ("time_budget_s", "clarify") if isinstance(meta.get(key), str)}
        if isinstance(meta.get("sources"), str):
            named["sources"] = [name.strip() for name in meta["sources"].split(",") if name.strip()]
        return {**data, "sleuth": named} if named else data

    def options(self) -> SleuthOptions:
        """The research options: the `sleuth` field, or the same names in `metadata`."""
        return self.sleuth or SleuthOptions()


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "sleuth"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ReplyMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str
    reasoning_content: str | None = None


class Choice(BaseModel):
    index: int = 0
    message: ReplyMessage
    finish_reason: Literal["stop", "length"] = "stop"


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage | None = None


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error in OpenAI's shape (`{"error": {message, type, param, code}}`): its clients raise it typed."""
    kind = "server_error" if status >= 500 else "authentication_error" if status == 401 else "invalid_request_error"
    code = {401: "invalid_api_key", 404: "not_found", 429: "rate_limit_exceeded"}.get(status)
    if status == 404 and message.startswith("model "):
        code = "model_not_found"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
