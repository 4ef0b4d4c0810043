"""`sleuth schema` prints the packets' JSON Schema; `--openapi` the HTTP API's schema, the same in
any environment (the web UI's REST types are generated from it)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sleuth.api.schemas import MessageCreate, SessionDetail
from sleuth.cli.schema import schema


def test_the_packet_schema_by_default() -> None:
    printed = json.loads(CliRunner().invoke(schema, []).output)
    assert printed["title"] == "Packet" and "run_start" in json.dumps(printed)


def test_the_openapi_schema_has_every_route_and_body(monkeypatch: pytest.MonkeyPatch) -> None:
    printed = json.loads(CliRunner().invoke(schema, ["--openapi"]).output)
    assert printed["openapi"].startswith("3.")
    assert {"/api/sessions/{session_id}/messages", "/api/runs/{run_id}/events"} <= set(printed["paths"])
    schemas = printed["components"]["schemas"]
    assert schemas["MessageCreate"]["properties"].keys() == MessageCreate.model_fields.keys()
    assert schemas["SessionDetail"]["required"] == list(SessionDetail.model_fields)
    monkeypatch.setenv("SLEUTH_CORS_ORIGINS", "http://ui.example")  # settings do not shape the schema
    monkeypatch.setenv("SLEUTH_MAX_MESSAGE_CHARS", "10")
    assert json.loads(CliRunner().invoke(schema, ["--openapi"]).output) == printed
