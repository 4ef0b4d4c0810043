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


# The provider refuses the model itself: retrying cannot help, and neither can going on with the run.
ACCESS_STATUS = {401: "authentication failed", 403: "permission denied", 404: "model not found"}
ACCESS_NAMES = {"AuthenticationError": 401, "PermissionDeniedError": 403, "NotFoundError": 404}


def root_cause(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


def _raised_before_sending(root: BaseException) -> bool:
    """An error a client library raises before any request leaves, such as a missing key.

    The OpenAI SDK raises its bare base class when no key is set, and litellm wraps that as a
    500 InternalServerError, which would otherwise look transient. Other providers raise a
    plain ValueError (e.g. "Missing Gemini API key") that litellm wraps as a connection error.
    """
    kind = type(root)
    return (kind.__name__ == "OpenAIError" and kind.__module__.split(".")[0] == "openai") or kind is ValueError


def access_problem(exc: BaseException) -> str | None:
    """What is wrong when the model cannot be used at all (credentials, permission, unknown model); else None."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status in ACCESS_STATUS:
        return ACCESS_STATUS[status]
    for cls in type(exc).__mro__:
        if cls.__name__ in ACCESS_NAMES:
            return ACCESS_STATUS[ACCESS_NAMES[cls.__name__]]
    root = root_cause(exc)
    if root is not exc and _raised_before_sending(root):
        return "missing credentials or configuration"
    return None


def is_transient(exc: BaseException) -> bool:
    """True for rate limits, server errors, timeouts and dropped connections."""
    if access_problem(exc) is not None:
        return False
    if isinstance(exc, (asyncio.TimeoutError, ConnectionError)):
        return True
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in TRANSIENT_STATUS
    return any(cls.__name__ in TRANSIENT_NAMES for cls in type(exc).__mro__)


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Exponential backoff with full jitter: uniform in [0.5, 1] of base·2^attempt, capped."""
    return float(min(cap, base * (2**attempt)) * (0.5 + rng.random() / 2))
