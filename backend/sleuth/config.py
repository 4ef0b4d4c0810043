"""The one settings object: every knob Sleuth reads from the environment or a `.env` file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import pydantic_settings
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sleuth.core.urls import POSTGRES_SCHEMES, check_redis_url, database_target, is_loopback_host

Mode = Literal["light", "heavy"]
Strategy = Literal["exploratory", "focused", "balanced"]
Role = Literal["clarifier", "planner", "orchestrator", "researcher", "report", "judge"]
AuthMode = Literal["none", "token", "accounts"]

# Bounds of a run's time budget, wherever it comes from (request, CLI, settings).
MIN_TIME_BUDGET_S = 10.0
MAX_TIME_BUDGET_S = 86_400.0


class Settings(BaseSettings):
    """Sleuth settings. Environment variables use the `SLEUTH_` prefix."""

    model_config = SettingsConfigDict(env_prefix="SLEUTH_", env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # Models (any litellm model string). Roles fall back to `model`.
    model: str = Field(
        default="offline",
        description="Any litellm model string (e.g. openai/gpt-4o-mini, ollama_chat/qwen3); `offline` is the "
        "built-in extractive model, which needs no key and no network.",
    )
    planner_model: str | None = Field(
        default=None, description="Model that asks clarifying questions and writes the plan; unset: SLEUTH_MODEL."
    )
    orchestrator_model: str | None = Field(
        default=None, description="Model that dispatches the research agents each cycle; unset: SLEUTH_MODEL."
    )
    researcher_model: str | None = Field(default=None, description="Model of the research agents; unset: SLEUTH_MODEL.")
    report_model: str | None = Field(
        default=None,
        description="Model that writes the final report, its title and key findings, follow-up answers and "
        "audio scripts; unset: SLEUTH_MODEL.",
    )
    judge_model: str | None = Field(
        default=None, description="Checks that cited sources support their sentences; unset: a word-overlap check."
    )
    api_base: str | None = Field(
        default=None, description="Endpoint passed to litellm, e.g. any OpenAI-compatible server's /v1 URL."
    )
    api_key: SecretStr | None = Field(
        default=None, description="Key passed to litellm for every model; unset: the provider's own variable."
    )
    reasoning: bool | None = Field(
        default=None, description="Force reasoning-model behaviour on/off; unset = ask litellm."
    )

    # Sources and storage.
    search: str = Field(
        default="local", description="Comma list of search providers: local, searxng, tavily, brave, duckduckgo."
    )
    corpus: str | None = Field(
        default=None,
        description="A folder to index and search, or an indexed collection's name: only it is searched. "
        "Unset: every local collection.",
    )
    data_dir: Path = Field(
        default_factory=lambda: Path.home() / ".sleuth",
        description="Databases, the corpus index, audio files and logs; default ~/.sleuth.",
    )
    index_max_file_mb: float = Field(
        default=50.0, gt=0, description="Files larger than this are skipped by `sleuth index` (with a line)."
    )
    upload_max_file_mb: float = Field(default=20.0, gt=0, description="Uploaded files larger than this get 413.")
    upload_max_files: int = Field(default=50, ge=1, description="Files per upload request.")
    upload_max_request_mb: float = Field(
        default=100.0, gt=0, description="An upload request (all its files) larger than this gets 413 as it is read."
    )
    upload_max_concurrent: int = Field(
        default=2, ge=1, description="Upload requests one server extracts at once; another one meanwhile gets 429."
    )
    upload_extract_timeout_s: float = Field(
        default=120.0, gt=0, description="An uploaded file whose text takes longer to extract is refused (422)."
    )
    upload_extract_memory_mb: float = Field(
        default=1024.0, gt=0, description="Memory the extraction of one uploaded file may use; more: refused (422)."
    )
    corpus_check_s: float = Field(
        default=30.0, ge=0, description="How often a run re-checks the SLEUTH_CORPUS folder for changed files."
    )
    database_url: SecretStr | None = Field(
        default=None,
        description="Unset: SQLite under the data dir. postgresql://user:password@host:port/db to share one "
        "database between servers; sqlite:///absolute/path.db for another SQLite file.",
    )
    database_pool_size: int = Field(
        default=10, ge=1, le=1000, description="Most connections one process holds to a PostgreSQL database."
    )
    redis_url: SecretStr | None = Field(
        default=None,
        description="Unset: runs execute inside the server. redis://[:password@]host:port/db (with a PostgreSQL "
        "database): servers only accept and stream runs, `sleuth worker` processes execute them.",
    )
    redis_prefix: str = Field(
        default="sleuth", min_length=1, max_length=64, description="Prefix of every Redis key and channel Sleuth uses."
    )
    run_lease_s: float = Field(
        default=30.0,
        ge=0.5,
        le=3600,
        description="With workers: a run whose worker has not renewed its lease for this long ends as interrupted.",
    )
    stream_ttl_s: float = Field(
        default=3600.0, ge=1, description="With workers: a run's live packet stream is kept this long after it ends."
    )

    # Web search providers and page fetching.
    searxng_url: str | None = Field(default=None, description="SearXNG base URL with the JSON format enabled.")
    tavily_api_key: SecretStr | None = Field(default=None, description="Key of the `tavily` search provider.")
    brave_api_key: SecretStr | None = Field(default=None, description="Key of the `brave` search provider.")
    ddgs_backend: str = Field(default="duckduckgo", description="ddgs backend(s), e.g. duckduckgo or auto.")
    search_timeout_s: float = Field(default=15.0, gt=0, description="Timeout of one web search request.")
    fetch_connect_timeout_s: float = Field(default=5.0, gt=0, description="Connect timeout for page fetches.")
    fetch_timeout_s: float = Field(default=15.0, gt=0, description="Read timeout for page fetches.")
    fetch_total_timeout_s: float = Field(
        default=30.0, gt=0, description="Limit on one whole fetch, redirects included."
    )
    fetch_max_bytes: int = Field(default=5_000_000, ge=1, description="A fetched page is cut at this many bytes.")
    fetch_max_redirects: int = Field(default=5, ge=0, description="Redirects one page fetch may follow.")
    fetch_allow_hosts: str = Field(
        default="",
        description="Comma list of host names (wiki.corp, *.corp), IPs or CIDRs that may be fetched although private.",
    )
    mcp_config: Path | None = Field(
        default=None,
        description='The MCP servers file (`{"mcpServers": {...}}`, docs/mcp.md); unset: `<data dir>/mcp.json` '
        "when it exists.",
    )
    mcp_allow_hosts: str = Field(
        default="",
        description="Comma list of host names, IPs or CIDRs an MCP server's URL may point at although private "
        "(the web fetches' guard refuses them otherwise).",
    )
    scheduler: bool = Field(
        default=True,
        description="Whether `sleuth serve` fires due schedules (docs/schedules.md); every server may, each due "
        "time fires once.",
    )
    schedule_tick_s: float = Field(default=15.0, gt=0, description="How often the scheduler looks for due schedules.")
    schedule_jitter_s: float = Field(
        default=30.0, ge=0, description="A schedule starts up to this many seconds after its due time (spread)."
    )
    webhook_allow_hosts: str = Field(
        default="",
        description="Comma list of host names, IPs or CIDRs a schedule's webhook may point at although private.",
    )
    webhook_timeout_s: float = Field(default=10.0, gt=0, description="Limit on one webhook delivery attempt.")
    webhook_attempts: int = Field(default=5, ge=1, description="Attempts of one webhook delivery, with backoff.")
    smtp_host: str = Field(default="", description="SMTP server for schedules' e-mail notifications; unset: no e-mail.")
    smtp_port: int = Field(default=587, ge=1, le=65535, description="Port of the SMTP server.")
    smtp_username: str = Field(default="", description="SMTP login; unset: send without logging in.")
    smtp_password: SecretStr | None = Field(default=None, description="SMTP password.")
    smtp_from: str = Field(default="sleuth@localhost", description="The From address of notification e-mails.")
    smtp_starttls: bool = Field(
        default=True, description="Switch to TLS (STARTTLS) before logging in; off only for a trusted local relay."
    )
    mcp_max_tools_per_agent: int = Field(
        default=15, ge=0, description="MCP tools one research agent sees at most, chosen by its task's words."
    )
    credibility_threshold: float = Field(
        default=0.2, ge=0, le=1, description="Sources at or below this are not fetched."
    )

    # Flow.
    clarify: bool = Field(
        default=True, description="Ask clarifying questions about a vague question before researching it."
    )
    mode: Mode = Field(default="heavy", description="Mode of a request that does not choose one.")
    strategy: Strategy = Field(
        default="balanced",
        description="How the orchestrator spreads its agents: exploratory (breadth), focused (depth) or balanced.",
    )
    max_parallel_agents: int = Field(
        default=3, ge=1, le=3, description="Research agents per cycle; further dispatches are answered 'not run'."
    )
    max_cycles: int | None = Field(
        default=None,
        ge=1,
        description="Orchestrator cycles per run (light mode: half, at least 2). Unset: 8, or 4 for reasoning models.",
    )
    agent_max_cycles: int = Field(default=6, ge=1, description="Research turns per agent (light mode: at most 3).")
    plan_max_steps: int = Field(default=6, ge=1, le=6, description="Steps in a plan (light mode: at most 3).")
    search_results: int = Field(
        default=6, ge=1, le=20, description="Results per search shown to an agent (light mode: at most 4)."
    )
    intermediate_report_max_tokens: int = Field(
        default=4000, ge=64, description="Cap on each agent's report in heavy mode; light mode uses half."
    )
    report_max_tokens: int = Field(default=8192, ge=256, description="Cap on the final report, in tokens.")
    plan_max_tokens: int = Field(default=1000, ge=64, description="A longer plan is cut (and a packet says so).")
    clarification_max_tokens: int = Field(
        default=500, ge=32, description="Longer clarifying questions are cut (and a packet says so)."
    )
    task_max_tokens: int = Field(default=300, ge=16, description="A longer research_agent task is cut.")
    orchestrator_max_tokens: int = Field(default=1024, ge=64, description="max_tokens of each orchestrator turn.")
    page_max_tokens: int = Field(
        default=3000,
        ge=128,
        description="Tokens of page text shown to an agent (light mode: half); a longer page is cut to its opening "
        "and the paragraphs that best match the agent's searches.",
    )
    history_max_tokens: int = Field(
        default=3000,
        ge=0,
        description="Cap on what the conversation carries into a run's prompts: the clarifying questions and "
        "their answer first, then earlier questions and reports, newest first.",
    )
    tts_model: str | None = Field(
        default=None, description="A litellm speech model for audio (e.g. openai/tts-1); unset: offline espeak-ng."
    )
    audio_max_script_chars: int = Field(
        default=25_000,
        ge=100,
        description="Characters spoken in one audio file (offline about 30 minutes); a longer script is cut "
        "there and its audio says so.",
    )
    audio_max_jobs: int = Field(
        default=2, ge=1, description="Audio files one server makes at once; a request for another gets 429."
    )
    audio_max_jobs_cluster: int = Field(
        default=6,
        ge=1,
        description="With SLEUTH_REDIS_URL: audio files all servers together make at once; past it, 429.",
    )
    plan_review_timeout_s: float = Field(
        default=900.0, gt=0, description="With plan review, the plan proceeds unchanged after this long unanswered."
    )
    plan_review_max_rounds: int = Field(
        default=3, ge=1, le=10, description="Plan reviews per run: the first plan plus this minus one revisions."
    )

    # Failure and time (seconds). Unset levels derive from the run's time budget in proportion
    # (see research/deadlines.py); a value set here wins over the budget.
    light_time_budget_s: float = Field(
        default=600.0, ge=MIN_TIME_BUDGET_S, le=MAX_TIME_BUDGET_S, description="Default time budget of a light run."
    )
    heavy_time_budget_s: float = Field(
        default=2110.0,
        ge=MIN_TIME_BUDGET_S,
        le=MAX_TIME_BUDGET_S,
        description="Default time budget of a heavy run: 30 min research, 5 min report, 10 s.",
    )
    agent_force_report_s: float | None = Field(
        default=None, gt=0, description="An agent stops researching and reports. Unset: 40% of the force report."
    )
    agent_timeout_s: float | None = Field(
        default=None, gt=0, description="An agent still running is cancelled. Unset: the force report time."
    )
    force_report_s: float | None = Field(
        default=None,
        gt=0,
        description="No more orchestrator cycles; the report is written. Unset: 1800/2110 of the time budget.",
    )
    report_timeout_s: float | None = Field(
        default=None, gt=0, description="The final report is cut. Unset: 300/2110 of the time budget."
    )
    agent_report_grace_s: float | None = Field(
        default=None,
        ge=0,
        description="Agents are told to report this long before the orchestrator's force report. "
        "Unset: 1/30 of the force report time.",
    )
    deadline_s: float | None = Field(
        default=None,
        gt=0,
        description="The run ends, always. Unset: the time budget (force report + report timeout + a margin "
        "when either of those is set).",
    )

    # Server.
    max_runs: int = Field(
        default=16, ge=1, description="Concurrent runs per server (with workers: across all of them); more get 429."
    )
    engine_processes: int = Field(
        default_factory=lambda: os.cpu_count() or 1,
        ge=0,
        le=64,
        description="Engine processes that execute a server's runs; unset: one per core. 0: one engine "
        "on a thread of the server's own process (no start-up of its own, no isolation from the server).",
    )
    auth: AuthMode | None = Field(
        default=None,
        description="Who may use the server. none: one built-in user, no sign-in (refuses a non-loopback address "
        "unless SLEUTH_ALLOW_UNAUTHENTICATED=1); token: the shared SLEUTH_API_TOKEN; accounts: users with "
        "passwords (`sleuth user add`) or single sign-on (SLEUTH_OIDC_ISSUER), and API keys. Unset: token when "
        "SLEUTH_API_TOKEN is set, else none.",
    )
    allow_unauthenticated: bool = Field(
        default=False,
        description="Let `sleuth serve` bind a non-loopback address with SLEUTH_AUTH=none (e.g. in a container "
        "whose port is published on loopback only).",
    )
    api_token: SecretStr | None = Field(
        default=None, description="When set, every /api route but health needs it as a bearer token."
    )
    public_url: str | None = Field(
        default=None,
        description="The address users open (e.g. https://sleuth.example.org): https makes sign-in cookies "
        "Secure, webhooks link reports under it (unset: links are paths, /api/reports/...), and single "
        "sign-on's redirect URI is <this>/api/auth/oidc/callback (unset: the address a request came to).",
    )
    auth_session_hours: float = Field(
        default=24.0 * 14, gt=0, le=24.0 * 366, description="A browser sign-in lasts this long (accounts mode)."
    )
    login_max_failures: int = Field(
        default=10, ge=1, description="Failed sign-ins per user name or client address within the window; more: 429."
    )
    login_window_s: float = Field(default=900.0, gt=0, description="The window of SLEUTH_LOGIN_MAX_FAILURES.")
    oidc_issuer: str | None = Field(
        default=None,
        description="Single sign-on (accounts mode): the OpenID Connect provider's issuer URL; its "
        "/.well-known/openid-configuration is read from there. https, or http on loopback for a provider "
        "on this machine (the server calls it, loopback included, because the operator chose it).",
    )
    oidc_client_id: str | None = Field(default=None, description="The client id Sleuth has at the provider.")
    oidc_client_secret: SecretStr | None = Field(
        default=None,
        description="The client secret Sleuth has at the provider; it also signs the short-lived cookie that "
        "carries a sign-in from the provider back to this server (any server of the same deployment).",
    )
    oidc_name: str = Field(
        default="single sign-on", max_length=60, description="The provider's name on the sign-in button."
    )
    oidc_allowed_domains: str = Field(
        default="",
        description="Comma list of e-mail domains allowed to sign in with the provider (a verified e-mail is "
        "then needed); empty: any.",
    )
    oidc_admin_emails: str = Field(
        default="",
        description="Comma list of e-mail addresses whose users become administrators when they sign "
        "in with the provider (verified e-mails only).",
    )
    cors_origins: str = Field(default="", description="Comma list of allowed browser origins; none by default.")
    heartbeat_s: float = Field(default=15.0, ge=0.05, description="SSE heartbeat after this long without a packet.")
    max_message_chars: int = Field(default=20_000, ge=1, description="A longer question or message gets 413.")
    retry_after_s: int = Field(default=5, ge=1, description="Retry-After sent with a 429.")
    cancel_wait_s: float = Field(
        default=5.0, gt=0, description="How long a cancel request waits for the run to end before it answers."
    )
    web_dist: str | None = Field(default=None, description="The built web UI; unset: frontend/dist.")

    # LLM gateway.
    llm_retries: int = Field(
        default=4, ge=0, description="Retries of a model call after a transient error (429, 5xx, timeout)."
    )
    llm_backoff_base_s: float = Field(
        default=0.5, ge=0, description="First retry's backoff; it doubles with each retry, with jitter."
    )
    llm_backoff_max_s: float = Field(default=20.0, ge=0, description="Longest backoff between two retries.")
    llm_timeout_s: float = Field(default=120.0, gt=0, description="Timeout of one model or speech call.")

    # Diagnostics.
    slow_callback_ms: float | None = Field(
        default=None,
        gt=0,
        description="Log (to stderr) every event-loop step of a CLI run that takes this long; "
        "turns on asyncio's debug mode, which slows the run.",
    )

    @field_validator(
        "api_base",
        "corpus",
        "searxng_url",
        "web_dist",
        "planner_model",
        "orchestrator_model",
        "researcher_model",
        "report_model",
        "tts_model",
        "judge_model",
        "api_token",
        "public_url",
        "auth",
        "oidc_issuer",
        "oidc_client_id",
        "oidc_client_secret",
        "api_key",
        "tavily_api_key",
        "brave_api_key",
        "database_url",
        "redis_url",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        """`SLEUTH_API_KEY=` in a .env means unset, not an empty key."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("database_url")
    @classmethod
    def _usable_database_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            database_target(value.get_secret_value(), Path("."))  # raises with the password masked
        return value

    @field_validator("redis_url")
    @classmethod
    def _usable_redis_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            check_redis_url(value.get_secret_value())  # raises with the password masked
        return value

    @model_validator(mode="after")
    def _workers_need_a_shared_database(self) -> Settings:
        if self.redis_url is not None and not self.uses_postgres:
            raise ValueError(
                "SLEUTH_REDIS_URL needs SLEUTH_DATABASE_URL=postgresql://... (workers and servers share one database)"
            )
        return self

    @model_validator(mode="after")
    def _token_mode_needs_a_token(self) -> Settings:
        if self.auth == "token" and self.api_token is None:
            raise ValueError("SLEUTH_AUTH=token needs SLEUTH_API_TOKEN")
        return self

    @model_validator(mode="after")
    def _single_sign_on_needs_accounts_and_a_client(self) -> Settings:
        if self.oidc_issuer is None:
            return self
        if self.auth_mode != "accounts":
            raise ValueError("SLEUTH_OIDC_ISSUER needs SLEUTH_AUTH=accounts")
        if self.oidc_client_id is None or self.oidc_client_secret is None:
            raise ValueError("SLEUTH_OIDC_ISSUER needs SLEUTH_OIDC_CLIENT_ID and SLEUTH_OIDC_CLIENT_SECRET")
        issuer = urlsplit(self.oidc_issuer)
        loopback = issuer.scheme == "http" and is_loopback_host(issuer.hostname or "")
        if not issuer.hostname or (issuer.scheme != "https" and not loopback):
            raise ValueError("SLEUTH_OIDC_ISSUER must be an https:// URL (or http:// on loopback)")
        return self

    @property
    def auth_mode(self) -> AuthMode:
        """`auth`, or what it was before accounts existed: the shared token when one is set."""
        if self.auth is not None:
            return self.auth
        return "token" if self.api_token is not None else "none"

    @property
    def secure_cookies(self) -> bool:
        return (self.public_url or "").lower().startswith("https://")

    @property
    def uses_postgres(self) -> bool:
        url = self.database_url.get_secret_value() if self.database_url else ""
        return url.split(":", 1)[0] in POSTGRES_SCHEMES

    @property
    def distributed(self) -> bool:
        """Runs execute on `sleuth worker` processes, reached through Redis and the job queue."""
        return self.redis_url is not None

    def time_budget_for(self, mode: Mode) -> float:
        """The default time budget of a mode."""
        return self.light_time_budget_s if mode == "light" else self.heavy_time_budget_s

    def model_for(self, role: Role) -> str:
        """The litellm model string for a role, falling back to `model`."""
        by_role = {
            "clarifier": self.planner_model,
            "planner": self.planner_model,
            "orchestrator": self.orchestrator_model,
            "researcher": self.researcher_model,
            "report": self.report_model,
            "judge": self.judge_model,
        }
        return by_role[role] or self.model

    @property
    def index_max_file_bytes(self) -> int:
        return int(self.index_max_file_mb * 1_000_000)

    @property
    def upload_max_file_bytes(self) -> int:
        return int(self.upload_max_file_mb * 1_000_000)

    @property
    def upload_max_request_bytes(self) -> int:
        return int(self.upload_max_request_mb * 1_000_000)

    @property
    def search_providers(self) -> list[str]:
        return [name.strip() for name in self.search.split(",") if name.strip()]

    @property
    def oidc_allowed_domain_list(self) -> list[str]:
        """`oidc_allowed_domains`, lower case, without a leading @; empty: any domain."""
        return [d.strip().lstrip("@").lower() for d in self.oidc_allowed_domains.split(",") if d.strip()]

    @property
    def oidc_admin_email_list(self) -> list[str]:
        return [e.strip().lower() for e in self.oidc_admin_emails.split(",") if e.strip()]

    @property
    def cors_origin_list(self) -> list[str]:
        """`cors_origins` as a list; empty: the server sends no CORS headers at all."""
        return [origin.strip() for origin in self.cors_origins.split(",") if origin.strip()]

    @property
    def max_body_bytes(self) -> int:
        """The largest request body the API reads (uploads have their own cap): the largest valid
        message at 4 bytes a character plus JSON overhead. A bigger one is refused unread."""
        return self.max_message_chars * 4 + 4096


class SettingsError(ValueError):
    """Settings that cannot be used, described in one line without their values (they may be secrets)."""


def load_settings() -> Settings:
    """The settings from the environment and `.env`; every command reads them through here."""
    try:
        return Settings()
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        message = str(first["msg"]).removeprefix("Value error, ")
        if not first["loc"]:  # a rule across settings: its message names them
            raise SettingsError(f"invalid settings: {message}{more}") from None
        name = "SLEUTH_" + "_".join(str(part) for part in first["loc"]).upper()
        raise SettingsError(f"invalid setting {name}: {message}{more}") from None
    except pydantic_settings.SettingsError as exc:  # e.g. a .env value that should be JSON and is not
        raise SettingsError(f"invalid settings: {exc}") from None
