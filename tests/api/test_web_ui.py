"""The built web UI at `/`, with SPA fallback; /api paths never fall back to it."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from conftest import live_server
from sleuth.config import Settings


async def test_serves_the_built_ui_with_spa_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>Sleuth UI</title>")
    (dist / "assets" / "app.js").write_text("console.log('sleuth')")
    (tmp_path / "secret.txt").write_text("outside dist")
    monkeypatch.setenv("SLEUTH_WEB_DIST", str(dist))
    with live_server(Settings(heartbeat_s=0.5)) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as client:
            index = await client.get("/")
            asset = await client.get("/assets/app.js")
            deep_link = await client.get("/sessions/s_123")
            api_miss = await client.get("/api/nope")
            docs = await client.get("/docs")
    assert index.status_code == 200 and "Sleuth UI" in index.text
    assert asset.status_code == 200 and "sleuth" in asset.text
    assert deep_link.status_code == 200 and "Sleuth UI" in deep_link.text
    assert api_miss.status_code == 404 and api_miss.headers["content-type"].startswith("application/json")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def raw_get(base_url: str, target: str) -> tuple[int, bytes]:
    """GET `target` byte for byte: HTTP clients collapse `..` segments before sending, a raw socket does not."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        response = b""
        while chunk := sock.recv(65536):
            response += chunk
    head, _, body = response.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize(
    "target", ["/assets/../../secret.txt", "/assets/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt", "/../secret.txt"]
)
async def test_a_path_out_of_the_build_folder_gets_the_app_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>Sleuth UI</title>")
    (tmp_path / "secret.txt").write_text("outside dist")
    monkeypatch.setenv("SLEUTH_WEB_DIST", str(dist))
    with live_server(Settings(heartbeat_s=0.5)) as live:
        status, body = raw_get(live.base_url, target)
        inside_status, inside = raw_get(live.base_url, "/assets/../index.html")
    assert status == 200 and b"Sleuth UI" in body and b"outside dist" not in body
    assert inside_status == 200 and b"Sleuth UI" in inside  # `..` inside the folder still resolves


async def test_a_nul_in_a_static_path_is_a_400(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "index.html").write_text("<!doctype html><title>Sleuth UI</title>")
    monkeypatch.setenv("SLEUTH_WEB_DIST", str(dist))
    with live_server(Settings(heartbeat_s=0.5)) as live:
        status, body = raw_get(live.base_url, "/assets/a%00.js")
    assert status == 400 and b"invalid path" in body


async def test_without_a_build_the_root_points_to_the_docs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("sleuth.api.app.find_web_dist", lambda configured: None)  # ignore a real frontend/dist
    with live_server(Settings(heartbeat_s=0.5)) as live:
        async with httpx.AsyncClient(base_url=live.base_url, timeout=10) as client:
            root = await client.get("/")
            other = await client.get("/whatever")
    assert root.status_code == 200 and "/docs" in root.text
    assert other.status_code == 404
