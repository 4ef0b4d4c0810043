"""Request and response bodies of the HTTP API (what /docs shows)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from sleuth.config import MAX_TIME_BUDGET_S, MIN_TIME_BUDGET_S, Mode
from sleuth.core.text import clean_label, has_visible_text
from sleuth.stream.results import ResearchResult, Snapshot, ToolDocument
from sleuth.tools.extraction.blocks import TextBlock


def _not_blank(value: str) -> str:
    if not has_visible_text(value):
        raise ValueError("must not be empty")
    return value


def _storable(value: str) -> str:
    # JSON may escape a lone surrogate ("\ud800"); it is not Unicode text and cannot be stored.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("contains an unpaired surrogate, which is not valid Unicode text") from None
    return value


def _label_or_empty(value: str) -> str:
    return clean_label(value) if value.strip() else ""


Text = Annotated[str, AfterValidator(_storable)]
# A title, a plan step: cleaned of control characters and bidi overrides, refused when nothing
# visible is left (core/text.py, the one rule for every label).
Label = Annotated[str, AfterValidator(_storable), AfterValidator(clean_label)]
OptionalLabel = Annotated[str, AfterValidator(_storable), AfterValidator(_label_or_empty)]


class _Request(BaseModel):
    """A request body: values must have the stated type (`"yes"` is not a boolean, `"5"` not a number)."""

    model_config = ConfigDict(strict=True)


class SessionCreate(_Request):
    title: OptionalLabel = Field(
        default="", max_length=200, description="Shown in the session list; defaults to the first question."
    )


def _time_budget() -> Any:
    return Field(
        default=None,
        ge=MIN_TIME_BUDGET_S,
        le=MAX_TIME_BUDGET_S,
        description="How long the run may take, in seconds; unset: the mode's default budget.",
    )


class SessionUpdate(_Request):
    title: Label = Field(min_length=1, max_length=200, description="The new title shown in the session list.")


class MessageCreate(_Request):
    content: Text = Field(description="A new question, or the answer to the clarification questions just asked.")
    mode: Mode | None = Field(default=None, description="`light` or `heavy`; unset: the server's default.")
    clarify: bool | None = Field(
        default=None, description="Ask clarification questions first; unset: the server's default."
    )
    time_budget_s: float | None = _time_budget()
    sources: list[str] | None = Field(
        default=None, max_length=100, description="Names from `GET /api/sources` to search; unset: the defaults."
    )
    review_plan: bool = Field(
        default=False, description="Wait after the plan for approval, edits or feedback (POST /api/runs/{id}/plan)."
    )
    followup: bool = Field(
        default=False,
        description="Answer from a finished report and its sources, without new research (message_* packets).",
    )
    report_id: str | None = Field(
        default=None, max_length=100, description="With `followup`: the report asked about; unset: the latest."
    )

    _content_not_blank = field_validator("content")(_not_blank)


class ResearchCreate(_Request):
    question: Text
    mode: Mode | None = None
    clarify: bool | None = None
    time_budget_s: float | None = _time_budget()
    sources: list[str] | None = Field(
        default=None, max_length=100, description="Names from `GET /api/sources` to search; unset: the defaults."
    )
    review_plan: bool = False

    _question_not_blank = field_validator("question")(_not_blank)


class _FromRecord(BaseModel):
    """A response built straight from a store record (`Model.model_validate(record)`), not copied by hand."""

    model_config = ConfigDict(from_attributes=True)


class SessionOut(_FromRecord):
    id: str
    title: str
    created_at: str
    updated_at: str


class MessageOut(_FromRecord):
    id: str
    role: Literal["user", "assistant"]
    content: str
    run_id: str | None
    created_at: str


class RunOut(_FromRecord):
    id: str
    session_id: str
    question: str
    kind: Literal["question", "clarification_answer"]
    status: Literal["running", "completed", "waiting_for_input", "error", "cancelled"]
    stop_reason: str | None
    mode: str | None
    report_id: str | None
    error: str | None
    clarification_questions: list[str]
    answers_run_id: str | None
    created_at: str
    finished_at: str | None

    @computed_field  # type: ignore[prop-decorator]  # mypy does not follow pydantic's decorator on a property
    @property
    def events_url(self) -> str:
        return f"/api/runs/{self.id}/events"


class SessionDetail(SessionOut):
    messages: list[MessageOut]
    runs: list[RunOut]


class RunCreated(BaseModel):
    run_id: str
    session_id: str
    kind: Literal["question", "clarification_answer"] = Field(
        description="`clarification_answer` when the message answered the previous run's questions."
    )
    events_url: str


class CancelOut(BaseModel):
    run_id: str
    status: str = Field(description="The run's status after the cancel request.")
    cancelled: bool = Field(description="False when the run had already ended.")


class ReportOut(ResearchResult):
    model_config = ConfigDict(title="Report")

    run_id: str
    session_id: str
    created_at: str
    tool_documents: list[ToolDocument] = Field(default_factory=list, exclude=True)
    snapshot: Snapshot | None = Field(default=None, exclude=True)


class PlanAnswerIn(_Request):
    """Exactly one of: `{"approve": true}`, `{"steps": [...]}` (used as given) or `{"feedback": "..."}`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    approve: bool | None = None
    steps: list[Label] | None = Field(default=None, max_length=20)
    feedback: Text | None = Field(default=None, max_length=4000)

    @model_validator(mode="after")
    def _exactly_one(self) -> PlanAnswerIn:
        given = [name for name in ("approve", "steps", "feedback") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError('send exactly one of "approve", "steps" or "feedback"')
        if self.approve is False:
            raise ValueError('"approve" must be true; to change the plan send "steps" or "feedback"')
        if self.steps is not None and not self.steps:  # each step itself has visible text (`Label`)
            raise ValueError('"steps" must contain at least one non-empty step')
        if self.feedback is not None and not self.feedback.strip():
            raise ValueError('"feedback" must not be empty')
        return self


class PlanAnswerOut(BaseModel):
    run_id: str
    accepted: bool


class SsoOut(BaseModel):
    name: str = Field(description="The provider's name, for the button (SLEUTH_OIDC_NAME).")
    login_url: str = Field(description="Where the button sends the browser to sign in with the provider.")


class HealthOut(BaseModel):
    status: Literal["ok"] = Field(description="The server answers (liveness); `ready` says whether it has warmed up.")
    ready: bool = Field(
        description="A run sent now starts at once: every engine warmed up and the model check answered. "
        "Until then a run asked for waits for the engines; `status` says only that the server answers."
    )
    version: str
    active_runs: int
    max_runs: int
    engines: int = Field(description="Engine processes that execute runs.")
    engines_ready: int = Field(description="Those warmed up; a run sent before any is ready waits for one.")
    auth: Literal["none", "token", "accounts"] = Field(
        description="The server's SLEUTH_AUTH mode: whether a caller without a credential is asked for a "
        "token or to sign in."
    )
    sso: SsoOut | None = Field(
        default=None, description="Single sign-on, when the server has it (the sign-in page offers it)."
    )


class ErrorOut(BaseModel):
    detail: str


VISIBILITY = (
    "who sees it. `everyone`: it has no owner (the built-in reference, `sleuth index` folders, uploads made "
    "without accounts); `private`: an upload only its owner (the caller) sees; `shared`: a user's upload an "
    "administrator shared with every user, read-only to all but its owner (docs/accounts.md)."
)


class SourceOut(BaseModel):
    name: str = Field(description="What to put in `sources` when starting research.")
    kind: Literal["local", "web", "mcp"] = Field(
        description="`local`: a collection in the corpus; `web`: a search provider; `mcp`: an MCP server whose "
        "tools the agents may call (docs/mcp.md)."
    )
    documents: int | None = Field(default=None, description="Documents in a local collection.")
    default: bool = Field(description="Searched when a request names no sources.")
    tools: int | None = Field(default=None, description="An MCP server's tools the agents see, once it is ready.")
    state: Literal["starting", "ready", "unavailable"] | None = Field(
        default=None,
        description="An MCP server's availability where runs execute: `starting` until they have started it "
        "(or tried to), then `ready` or `unavailable` (`reason` says why).",
    )
    reason: str | None = Field(default=None, description="Why an MCP server is unavailable.")
    visibility: Literal["everyone", "private", "shared"] | None = Field(
        default=None, description=f"A local collection's: {VISIBILITY}"
    )
    editable: bool | None = Field(
        default=None, description="A local collection's: whether the caller may add files to it and delete them."
    )


class CollectionOut(BaseModel):
    name: str
    kind: str = Field(description="`builtin`, `indexed` (sleuth index), `env` (SLEUTH_CORPUS) or `uploaded`.")
    documents: int
    chunks: int
    visibility: Literal["everyone", "private", "shared"] = Field(description=VISIBILITY)
    editable: bool = Field(description="Whether the caller may add files to it and delete them.")


class DocumentEntryOut(_FromRecord):
    id: str = Field(description="The document's id, as in packets; open it with `GET /api/documents/{id}`.")
    url: str
    title: str
    path: str
    size: int


class RefusedFileOut(_FromRecord):
    filename: str
    status: int = Field(description="The status that fits this file alone: 413 too big, 415 its type, 422 its text.")
    reason: str


class UploadOut(_FromRecord):
    added: list[DocumentEntryOut] = Field(description="The files added, as documents of the collection.")
    refused: list[RefusedFileOut] = Field(description="The files that were not added, each with the reason.")


class UploadRefusedOut(BaseModel):
    detail: str = Field(description="Every file's refusal, `name: reason`, separated by '; '.")
    refused: list[RefusedFileOut]


class DocumentOut(BaseModel):
    """One document, opened: its text as stored, and the same text as blocks to read."""

    id: str
    url: str
    title: str
    collection: str | None = Field(description="The local collection; null for a web page.")
    text: str = Field(description="The text as extracted and searched (hard line breaks and all).")
    blocks: list[TextBlock] = Field(
        description="The text as headings, reflowed paragraphs, list items, code and tables, to render as text."
    )


# -- accounts ---------------------------------------------------------------------------------


class LoginIn(_Request):
    username: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=4096)


class MeOut(BaseModel):
    """The caller. In SLEUTH_AUTH none and token modes, the built-in user (`local`, an administrator)."""

    name: str
    is_admin: bool
    auth: Literal["none", "token", "accounts"] = Field(description="The server's SLEUTH_AUTH mode.")
    has_password: bool = Field(
        default=False,
        description="The caller has a password to change (`POST /api/auth/password`): false for an account made by "
        "single sign-on that was never given one, and without accounts.",
    )
    csrf_token: str | None = Field(
        default=None,
        description="Signed in by cookie: the value to send as X-CSRF-Token with requests that change something "
        "(the sleuth_csrf cookie holds it too).",
    )


class PasswordChangeIn(_Request):
    current_password: str = Field(min_length=1, max_length=4096)
    new_password: str = Field(min_length=1, max_length=4096)


class ApiKeyCreate(_Request):
    name: Label = Field(max_length=100, description="What the key is for, e.g. the script or machine using it.")
    expires_in_days: float | None = Field(
        default=None, gt=0, le=3650, description="The key stops working after this many days; unset: never."
    )


class ApiKeyOut(BaseModel):
    id: str
    name: str
    created_at: str
    expires_at: str | None = None
    last_used_at: str | None = None


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="The key (sk_sleuth_…), shown this once: send it as `Authorization: Bearer <key>`.")


class UserUsageOut(BaseModel):
    """A user and what their research has used (sessions, runs, and their reports' tokens and cost)."""

    name: str
    is_admin: bool
    disabled: bool
    created_at: str
    sessions: int
    runs: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


class AdminSessionOut(SessionDetail):
    """Another user's session as an administrator reads it (recorded in the audit): its messages, runs
    and their reports."""

    owner: str = Field(description="The user whose session this is.")
    reports: list[ReportOut]


class AdminReadOut(BaseModel):
    """One administrator's read of another user's research, as the audit recorded it."""

    at: str = Field(description="When (ISO 8601, UTC).")
    admin: str = Field(description="The administrator who read.")
    user: str = Field(description="Whose research was read.")
    action: Literal["list_sessions", "read_session"] = Field(
        description="`list_sessions`: the user's sessions; `read_session`: one session, with its messages and reports."
    )
    session_id: str | None = None
