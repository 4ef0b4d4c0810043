"""The one error extraction raises."""

from __future__ import annotations

from sleuth.tools.base import ToolError


class ExtractError(ToolError):
    """The content could not be turned into text; the message says why, in one line."""
