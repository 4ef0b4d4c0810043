"""The CLI's sources list marks citations whose source does not support their sentence."""

from __future__ import annotations

import io

from sleuth.cli.progress import ProgressPrinter
from sleuth.stream.packets import NumberedSource, Packet, Placement, Report, UnsupportedClaim


def test_unsupported_claims_are_marked_in_the_sources_list() -> None:
    sources = [
        NumberedSource(number=1, id="d_a", url="corpus://python-reference/with", title="The with statement"),
        NumberedSource(number=2, id="d_b", url="corpus://python-reference/power", title="The power operator"),
    ]
    claim = UnsupportedClaim(
        marker="[2]", occurrence=1, sentence="The moon is cheese.", reason="no key words in common"
    )
    report = Report(report_id="rep_1", markdown="Text [1]. The moon is cheese [2].", sources=sources)
    out, err = io.StringIO(), io.StringIO()
    printer = ProgressPrinter(out, err, color=False)
    printer(Packet(seq=0, run_id="r", placement=Placement(turn_index=1), obj=report))
    assert "Unsupported" not in out.getvalue()
    out.truncate(0)
    flagged = report.model_copy(update={"unsupported_claims": [claim]})
    printer(Packet(seq=1, run_id="r", placement=Placement(turn_index=1), obj=flagged))
    lines = out.getvalue().splitlines()
    assert "[1] The with statement — corpus://python-reference/with" in lines
    assert "[2] The power operator — corpus://python-reference/power  (! 1 unsupported claim)" in lines
    assert "! [2] “The moon is cheese.” — no key words in common" in lines


def test_an_uncited_sentence_is_listed_without_a_marker() -> None:
    claim = UnsupportedClaim(marker="", occurrence=1, sentence="Generators are lazy.", reason="no citation: …")
    report = Report(report_id="rep_1", markdown="Generators are lazy.", sources=[], unsupported_claims=[claim])
    out, err = io.StringIO(), io.StringIO()
    ProgressPrinter(out, err, color=False)(Packet(seq=0, run_id="r", placement=Placement(turn_index=1), obj=report))
    assert "! “Generators are lazy.” — no citation: …" in out.getvalue().splitlines()
