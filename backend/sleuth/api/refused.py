"""A request the server refuses, in no protocol's words: the HTTP routes make it an HTTP error,
the MCP server a tool error."""

from __future__ import annotations


class Refused(Exception):
    """`status` is the HTTP status that says why, `detail` the sentence a caller reads."""

    def __init__(self, status: int, detail: str, retry_after_s: int | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.retry_after_s = retry_after_s
