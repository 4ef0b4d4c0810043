import json

import pytest
from pydantic import ValidationError

from sleuth.stream.emitter import Emitter
from sleuth.stream.packets import Packet, Placement, PlanDelta, RunStart, Stop, packet_json_schema, parse_packet


def test_emitter_numbers_from_zero_and_stops_once() -> None:
    seen: list[Packet] = []
    emitter = Emitter("run_1", [seen.append])
    emitter.emit(Placement(turn_index=0), RunStart(session_id="s", question="q", mode="heavy", models={}))
    emitter.emit(Placement(turn_index=1), PlanDelta(content="1."))
    emitter.stop(Placement(turn_index=1), "completed")
    assert emitter.stop(Placement(turn_index=1), "error") is None
    assert emitter.emit(Placement(turn_index=2), PlanDelta(content="late")) is None
    assert [p.seq for p in seen] == [0, 1, 2] and isinstance(seen[-1].obj, Stop)
    assert emitter.stop_reason == "completed"


def test_packets_round_trip_and_unknown_types_are_rejected() -> None:
    packet = Packet(
        seq=3, run_id="r", placement=Placement(turn_index=2, tab_index=1, sub_turn_index=0), obj=PlanDelta(content="x")
    )
    assert parse_packet(packet.model_dump_json()) == packet
    data = json.loads(packet.model_dump_json())
    data["obj"] = {"type": "nonsense"}
    with pytest.raises(ValidationError):
        parse_packet(data)


def test_schema_lists_every_packet_type() -> None:
    schema = json.dumps(packet_json_schema())
    for kind in (
        "run_start",
        "top_level_branching",
        "citation_info",
        "report",
        "degraded",
        "summary",
        "stop",
        "plan_done",
    ):
        assert f'"const": "{kind}"' in schema
