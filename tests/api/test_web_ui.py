"""The built web UI at `/`, with SPA fallback; /api paths never fall back to it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from conftest import live_server
from sleuth.api.limits import ApiLimits
from sleuth.config import Settings


async def test_serves_the_built_ui_with_spa_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>Sleuth UI</title>")
    (dist / "assets" / "app.js").write_text("console.log('sleuth')")
    (tmp_path / "secret.txt").write_text("outside dist")
    monkeypatch.setenv("SLEUTH_WEB_DIST", str(dist))
    with live_server(Settings(), ApiLimits.from_settings(Settings())) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as client:
            index = await client.get("/")
            asset = await client.get("/assets/app.js")
            deep_link = await client.get("/sessions/s_123")
            api_miss = await client.get("/api/nope")
            escape = await client.get("/assets/../../secret.txt")
            docs = await client.get("/docs")
    assert index.status_code == 200 and "Sleuth UI" in index.text
    assert asset.status_code == 200 and "sleuth" in asset.text
    assert deep_link.status_code == 200 and "Sleuth UI" in deep_link.text
    assert api_miss.status_code == 404 and api_miss.headers["content-type"].startswith("application/json")
    assert "outside dist" not in escape.text
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


async def test_without_a_build_the_root_points_to_the_docs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("sleuth.api.app.find_web_dist", lambda configured: None)  # ignore a real frontend/dist
    with live_server(Settings(), ApiLimits(heartbeat_s=0.5)) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as client:
            root = await client.get("/")
            other = await client.get("/whatever")
    assert root.status_code == 200 and "/docs" in root.text
    assert other.status_code == 404
