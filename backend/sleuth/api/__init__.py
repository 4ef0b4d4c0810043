"""The HTTP server: FastAPI app, durable runs, SSE with resume."""
