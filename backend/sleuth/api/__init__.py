"""The HTTP server: FastAPI app, durable runs, SSE with resume."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sleuth.core.lazy import lazy_exports

if TYPE_CHECKING:
    from sleuth.api.app import create_app

__all__ = ["create_app"]
__getattr__ = lazy_exports(__name__, {"create_app": "app"})
