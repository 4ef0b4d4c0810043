"""The server's limits, derived from the one Settings object (they have no defaults of their own)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr

from sleuth.config import Settings


@dataclass(frozen=True)
class ApiLimits:
    max_runs: int  # concurrent runs per server process; more -> 429
    api_token: SecretStr | None  # when set, every /api route but health needs `Bearer <token>`
    cors_origins: list[str]  # none: no CORS headers at all
    heartbeat_s: float  # SSE comment sent after this long without a packet
    max_message_chars: int  # a longer message or question -> 413
    retry_after_s: int  # Retry-After on 429
    web_dist: str | None  # the built web UI; unset: frontend/dist of the source tree or cwd
    max_upload_bytes: int  # a whole upload request (every file plus form overhead)

    @property
    def max_body_bytes(self) -> int:
        # A request body bigger than the largest valid message (4 bytes a char, JSON overhead)
        # is refused before it is read into memory.
        return self.max_message_chars * 4 + 4096

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiLimits:
        return cls(
            max_runs=settings.max_runs,
            api_token=settings.api_token,
            cors_origins=[o.strip() for o in settings.cors_origins.split(",") if o.strip()],
            heartbeat_s=settings.heartbeat_s,
            max_message_chars=settings.max_message_chars,
            retry_after_s=settings.retry_after_s,
            web_dist=settings.web_dist,
            max_upload_bytes=settings.upload_max_request_bytes,
        )
