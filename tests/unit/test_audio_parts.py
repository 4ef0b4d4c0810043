"""Audio without a server: the cap on what is spoken."""

from __future__ import annotations

from sleuth.audio.script import CUT_NOTE, Line, capped, script_for
from sleuth.config import Settings
from sleuth.research.types import ResearchResult

SENTENCE = "Data descriptors take precedence over the instance dictionary. "


def _report(paragraphs: int) -> ResearchResult:
    body = "\n\n".join(f"## Part {n}\n\n{SENTENCE * 4}" for n in range(paragraphs))
    return ResearchResult(
        status="completed",
        stop_reason="completed",
        report_id="rep_long",
        question="How does attribute lookup work?",
        title="Attribute lookup",
        summary="Descriptors first.",
        markdown=body,
    )


async def test_a_script_longer_than_the_cap_is_cut_at_a_sentence_and_says_so() -> None:
    settings = Settings(audio_max_script_chars=1000)
    whole = await script_for(Settings(), _report(20), "narration")
    cut = await script_for(settings, _report(20), "narration")
    short = await script_for(settings, _report(1), "narration")
    spoken = [line.text for line in cut[:-1]]
    assert sum(len(line.text) for line in whole) > 5000
    assert cut[-1] == Line(0, CUT_NOTE)
    assert 900 < sum(map(len, spoken)) <= 1000  # filled up to the cap, not beyond
    assert spoken[-1].endswith("dictionary.") and whole[: len(spoken) - 1] == cut[: len(spoken) - 1]
    assert CUT_NOTE not in (line.text for line in short) and short == await script_for(
        Settings(), _report(1), "narration"
    )


def test_a_line_with_no_sentence_end_in_reach_is_cut_at_a_word_and_a_single_word_is_dropped() -> None:
    assert capped([Line(1, "one two three four")], 10) == [Line(1, "one two"), Line(0, CUT_NOTE)]
    assert capped([Line(0, "ok"), Line(1, "unbreakable")], 5) == [Line(0, "ok"), Line(0, CUT_NOTE)]
    assert capped([Line(0, "fits exactly")], 12) == [Line(0, "fits exactly")]
