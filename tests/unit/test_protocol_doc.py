"""docs/protocol.md and `sleuth schema` describe the same packets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sleuth.stream.packets import packet_json_schema

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
ROW = re.compile(r"^\| `([a-z_]+)` \| (.*)$", re.M)


def _packet_types(schema: dict[str, Any]) -> dict[str, list[str]]:
    """type -> field names, for every `obj` in the schema's union."""
    defs = schema["$defs"]
    names = [ref["$ref"].rsplit("/", 1)[-1] for ref in schema["properties"]["obj"]["oneOf"]]
    return {
        defs[name]["properties"]["type"]["const"]: [f for f in defs[name]["properties"] if f != "type"]
        for name in names
    }


def _doc_rows(section: str) -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"### {section}", 1)[1].split("\n#", 1)[0]
    return {name: rest for name, rest in ROW.findall(body)}


def test_every_packet_type_and_field_of_the_schema_is_in_the_doc() -> None:
    rows = _doc_rows("Packet types")
    for packet_type, fields in _packet_types(packet_json_schema()).items():
        assert packet_type in rows, f"{packet_type} is missing from docs/protocol.md"
        missing = [f for f in fields if f"`{f}`" not in rows[packet_type]]
        assert not missing, f"{packet_type}: fields {missing} are missing from docs/protocol.md"


def test_the_doc_lists_no_packet_type_the_schema_lacks() -> None:
    documented = set(_doc_rows("Packet types"))
    assert documented == set(_packet_types(packet_json_schema()))


def test_envelope_placement_objects_and_enums_are_documented() -> None:
    schema = packet_json_schema()
    defs = schema["$defs"]
    text = DOC.read_text(encoding="utf-8")
    for name in ["seq", "run_id", "placement", "obj", *defs["Placement"]["properties"]]:
        assert f"| `{name}` |" in text
    for model in ("Document", "NumberedSource", "RemovedCitation", "UnsupportedClaim", "KeyFinding", "MethodNote"):
        row = next(line for line in text.splitlines() if line.startswith(f"| {model} |"))
        own = set(defs[model]["properties"]) - (set(defs["Document"]["properties"]) if model != "Document" else set())
        assert all(f"`{f}`" in row for f in own), model
    for level in defs["Degraded"]["properties"]["level"]["enum"]:
        assert f"| `{level}` |" in text
    for reason in defs["Stop"]["properties"]["reason"]["enum"]:
        assert f"`{reason}`" in _doc_rows("Packet types")["stop"]
