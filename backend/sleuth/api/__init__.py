"""The HTTP server: FastAPI app, durable runs, SSE with resume."""

from sleuth.api.app import create_app

__all__ = ["create_app"]
