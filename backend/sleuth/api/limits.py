"""The server's limits, taken from the one Settings object.

Callers (tests, the benchmark) can also pass an `ApiLimits` to `create_app`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import SecretStr

from sleuth.config import Settings


@dataclass(frozen=True)
class ApiLimits:
    max_runs: int = 16  # concurrent runs per server process; more -> 429
    api_token: SecretStr | None = None  # when set, every /api route but health needs `Bearer <token>`
    cors_origins: list[str] = field(default_factory=list)  # none: no CORS headers at all
    heartbeat_s: float = 15.0  # SSE comment sent after this long without a packet
    max_message_chars: int = 20_000  # a longer message or question -> 413
    retry_after_s: int = 5  # Retry-After on 429
    web_dist: str | None = None  # the built web UI; unset: frontend/dist of the source tree or cwd
    max_upload_bytes: int = 50 * 20_000_000 + 1_000_000  # a whole upload request (every file plus form overhead)

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
            heartbeat_s=max(0.05, settings.heartbeat_s),
            max_message_chars=settings.max_message_chars,
            web_dist=settings.web_dist,
            max_upload_bytes=settings.upload_max_files * settings.upload_max_file_bytes + 1_000_000,
        )
