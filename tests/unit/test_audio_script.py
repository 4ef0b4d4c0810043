"""What narration reads aloud: the report as rendered, never markdown syntax or an image's URL."""

from __future__ import annotations

from sleuth.audio.script import narration
from sleuth.stream.results import ResearchResult


def test_narration_says_an_image_by_its_alt_text_and_reads_escapes_as_rendered() -> None:
    report = ResearchResult(
        status="completed",
        stop_reason="completed",
        question="q",
        title="The ![company logo](/srv/logo.png) story",
        summary=r"Remarkable!\[1] The \_\_getattr\_\_ hook.",
        markdown="See ![the chart](http://127.0.0.1:9/c.png) [1].\n\n- ![](https://example.com/x.png) item [2]\n",
    )
    assert [line.text for line in narration(report)] == [
        "The company logo story",
        "Remarkable! The getattr hook.",
        "See the chart.",
        "item",
    ]
