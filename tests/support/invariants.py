"""Protocol invariants every run must satisfy, checked on every engine scenario."""

from __future__ import annotations

from collections import defaultdict

from sleuth.core.markdown import cited_numbers
from sleuth.stream.packets import Packet, parse_packet


def check_framing(packets: list[Packet]) -> None:
    """What every run's stream promises, however it ended (its engine, a restart, a reaper, a
    cancel before it began): seq from 0 without gaps, one run, `run_start` first, one `stop` last."""
    assert packets, "no packets"
    assert [p.seq for p in packets] == list(range(len(packets))), "seq must be contiguous from 0"
    assert len({p.run_id for p in packets}) == 1
    assert packets[0].obj.type == "run_start", f"the first packet is {packets[0].obj.type}, not run_start"
    stops = [p for p in packets if p.obj.type == "stop"]
    assert len(stops) == 1, f"exactly one stop, got {len(stops)}"
    assert packets[-1].obj.type == "stop", "stop must be last"


def check_stored(rows: list[str]) -> list[Packet]:
    """A run's stored (or streamed) packet texts, parsed and checked with `check_framing`."""
    packets = [parse_packet(row) for row in rows]
    check_framing(packets)
    return packets


def check_invariants(packets: list[Packet]) -> None:
    check_framing(packets)

    branches: dict[int, int] = {}
    for packet in packets:
        if packet.obj.type == "top_level_branching":
            branches[packet.placement.turn_index] = packet.obj.num_parallel_branches
    turns = [p.placement.turn_index for p in packets]
    assert turns == sorted(turns), "turn_index never goes back"
    lanes_seen: dict[int, set[int]] = defaultdict(set)
    for packet in packets:
        turn, tab, sub = packet.placement.turn_index, packet.placement.tab_index, packet.placement.sub_turn_index
        if turn in branches:
            assert tab < branches[turn], f"tab {tab} beyond {branches[turn]} lanes in turn {turn}"
            lanes_seen[turn].add(tab)
        else:
            assert tab == 0, f"tab {tab} outside a branching turn ({packet.obj.type})"
            assert sub is None, f"sub_turn_index outside an agent ({packet.obj.type})"

    reports = [p for p in packets if p.obj.type == "report"]
    assert len(reports) <= 1
    if reports:
        report = reports[0].obj
        numbers = set(cited_numbers(report.markdown))  # the product's rule: "divmod(x,y)[0]" is no citation
        infos = {p.obj.citation_number for p in packets if p.obj.type == "citation_info"}
        assert numbers <= infos, f"citations without citation_info: {numbers - infos}"
        assert infos == {s.number for s in report.sources}
        assert [s.number for s in report.sources] == list(range(1, len(report.sources) + 1)), "gapless numbering"
