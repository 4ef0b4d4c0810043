"""Which LLM failures are worth retrying, and how long to wait before the next try."""

from __future__ import annotations

import asyncio
import random

TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
TRANSIENT_NAMES = {
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "APIConnectionError",
    "Timeout",
    "APITimeoutError",
    "BadGatewayError",
    "ReadTimeout",
    "ConnectTimeout",
    "RemoteProtocolError",
    "ReadError",
    "ConnectError",
    "MidStreamFallbackError",
}


def is_transient(exc: BaseException) -> bool:
    """True for rate limits, server errors, timeouts and dropped connections."""
    if isinstance(exc, (asyncio.TimeoutError, ConnectionError)):
        return True
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in TRANSIENT_STATUS
    return any(cls.__name__ in TRANSIENT_NAMES for cls in type(exc).__mro__)


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Exponential backoff with full jitter: uniform in [0.5, 1] of base·2^attempt, capped."""
    return min(cap, base * 2.0**attempt) * (0.5 + rng.random() / 2)
