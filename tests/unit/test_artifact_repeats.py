"""The report's artifact (title, summary, key findings) never says again what its body says."""

from __future__ import annotations

from sleuth.llm.offline.request import OfflineRequest
from sleuth.llm.offline.script import record_dialogue, record_overview
from sleuth.llm.prompting import render
from sleuth.research.report.artifact import Artifact, fallback_artifact, without_repeats
from sleuth.store.records import session_title
from sleuth.stream.packets import KeyFinding

BODY = """A descriptor defines `__get__()`. [1] Data descriptors also define `__set__()`. [1]

## Lookup

2. define a name in the local namespace. [2]

- Instance attributes shadow non-data descriptors. [1]
"""


def test_what_the_body_says_is_dropped_from_the_summary_and_key_findings() -> None:
    artifact = Artifact(
        title="Descriptors",
        summary="A descriptor defines __get__(). 2. define a name in the local namespace. "
        "Descriptors customise attribute access.",
        key_findings=[
            KeyFinding(text="Data descriptors also define `__set__()`.", citations=[1]),
            KeyFinding(text="2. define a name in the local namespace.", citations=[2]),  # a list item in the body
            KeyFinding(text="Instance attributes shadow non-data descriptors!", citations=[1]),
            KeyFinding(text="Descriptors customise attribute access.", citations=[1]),  # the summary says it
            KeyFinding(text="Properties are data descriptors.", citations=[1]),
            KeyFinding(text="Properties are data descriptors.", citations=[1]),
        ],
    )
    kept = without_repeats(artifact, BODY)
    assert kept.title == "Descriptors"
    assert kept.summary == "Descriptors customise attribute access."
    assert [f.text for f in kept.key_findings] == ["Properties are data descriptors."]


def test_a_finding_that_adds_a_sentence_to_one_the_body_has_is_kept() -> None:
    finding = KeyFinding(text="A descriptor defines __get__(). That is why methods bind.", citations=[1])
    kept = without_repeats(Artifact(title="t", summary="", key_findings=[finding]), BODY)
    assert kept.key_findings == [finding]


def test_without_a_model_the_artifact_is_a_whole_title_and_nothing_copied() -> None:
    question = " ".join(["Why does this long question about descriptors keep going"] * 3) + "?"
    artifact = fallback_artifact(question, BODY)
    assert artifact.summary == "" and artifact.key_findings == []
    assert len(artifact.title) <= 120 and artifact.title.endswith("…") and question.startswith(artifact.title[:-1])
    assert question[len(artifact.title) - 1] == " "  # cut between words


def test_a_session_title_is_shortened_between_words() -> None:
    question = "How do Python descriptors, __getattr__ and __getattribute__ interact when an attribute is looked up?"
    title = session_title(question)
    assert title == "How do Python descriptors, __getattr__ and __getattribute__ interact…"  # not "when an…"
    assert session_title("Short question?") == "Short question?"


def test_offline_audio_scripts_read_the_opening_paragraph_when_the_artifact_has_nothing_of_its_own() -> None:
    markdown = (
        "A descriptor defines __get__(). [1]\n\n## Lookup\n\n"
        "Data descriptors win over instances. [1] Methods bind to instances. [2]"
    )
    user = render(
        "audio_user",
        question="How do descriptors work?",
        title="Descriptors",
        summary="",
        key_findings=[],
        markdown=markdown,
    )
    request = OfflineRequest(messages=[{"role": "user", "content": user}], tools=[])
    overview = [line["text"] for line in record_overview(request).tool_calls[0][1]["lines"]]
    assert overview[1:] == [
        "A descriptor defines __get__().",
        "Data descriptors win over instances.",
        "Methods bind to instances.",
    ]
    dialogue = record_dialogue(request).tool_calls[0][1]["lines"]
    assert [line["text"] for line in dialogue if line["speaker"] == 1] == overview[1:]
