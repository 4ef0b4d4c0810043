"""The built web UI (frontend/dist) at `/`, with SPA fallback to index.html for non-/api paths."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, HTMLResponse

import sleuth

NO_UI = """<!doctype html><meta charset="utf-8"><title>Sleuth</title>
<p>The Sleuth API is running. The web UI has not been built
(<code>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build</code>).
API documentation: <a href="/docs">/docs</a>.</p>"""


def find_web_dist(configured: str | None) -> Path | None:
    """The configured folder (SLEUTH_WEB_DIST), else frontend/dist next to the source tree, else ./frontend/dist."""
    candidates = [
        configured,
        Path(sleuth.__file__).resolve().parents[2] / "frontend" / "dist",
        Path.cwd() / "frontend" / "dist",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / "index.html").is_file():
            return Path(candidate).resolve()
    return None


def mount_web_ui(app: FastAPI, dist: Path | None) -> None:
    @app.get("/{path:path}", include_in_schema=False, response_model=None)
    async def web_ui(path: str) -> FileResponse | HTMLResponse:
        if path == "api" or path.startswith("api/"):
            raise HTTPException(status_code=404, detail="no such API route")
        if "\x00" in path:  # no file name holds one; the OS would refuse it with an exception
            raise HTTPException(status_code=400, detail="invalid path")
        if dist is None:
            if path in ("", "index.html"):
                return HTMLResponse(NO_UI)
            raise HTTPException(status_code=404, detail="not found")
        target = (dist / path).resolve()
        if path and target.is_file() and target.is_relative_to(dist):
            return FileResponse(target)
        # Client-side routes (/sessions/abc) get the app shell; index.html must not be cached
        # so a new build is picked up.
        return FileResponse(dist / "index.html", headers={"Cache-Control": "no-cache"})
