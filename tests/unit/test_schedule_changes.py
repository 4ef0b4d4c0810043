"""The diff of two schedule snapshots: claims matched by shared citations and similarity, sources by URL."""

from __future__ import annotations

from sleuth.research.report.changes import compare, section, with_section
from sleuth.scaleout.queue import decode_request, encode_request
from sleuth.stream.packets import NumberedSource
from sleuth.stream.results import ResearchRequest, ResearchResult, Snapshot, SnapshotClaim, SnapshotSource

A, B, C = "https://a.example/doc", "https://b.example/doc", "https://c.example/doc"


def _snapshot(claims: list[tuple[str, list[str]]], sources: dict[str, str]) -> Snapshot:
    return Snapshot(
        taken_at="2026-03-02T06:00:00+00:00",
        report_id="rep_old",
        claims=[SnapshotClaim(sentence=s, urls=u) for s, u in claims],
        sources=[
            SnapshotSource(url=url, title=url, sha256=digest, passages=[digest]) for url, digest in sources.items()
        ],
    )


def _numbered(*urls: str) -> list[NumberedSource]:
    return [
        NumberedSource(number=i, id=f"d{i}", url=url, title=url, snippet="", source="web")
        for i, url in enumerate(urls, 1)
    ]


def test_claims_pair_by_shared_citation_and_similarity_and_the_rest_are_new_or_dropped() -> None:
    before = _snapshot(
        [
            ("The rate limit is 100 requests per minute.", [A]),
            ("The service runs in three regions.", [B]),
            ("Support answers within one day.", [A]),
        ],
        {A: "a1", B: "b1"},
    )
    after = _snapshot(
        [
            ("The rate limit is 250 requests per minute.", [A]),  # same source, alike: changed
            ("The service runs in three regions [2].", [B]),  # the same sentence: unchanged
            ("Billing moved to monthly invoices.", [C]),  # new
        ],
        {A: "a2", B: "b1", C: "c1"},
    )
    diff = compare(before, after, _numbered(A, B, C))
    assert [(c.status, c.sentence, c.previous, c.numbers) for c in diff.claims] == [
        ("changed", "The rate limit is 250 requests per minute.", "The rate limit is 100 requests per minute.", [1]),
        ("new", "Billing moved to monthly invoices.", None, [3]),
        ("dropped", "Support answers within one day.", None, []),
    ]
    assert [(s.status, s.url, s.number) for s in diff.sources] == [("changed", A, 1), ("new", C, 3)]
    assert diff.sources[0].added == ["a2"] and diff.sources[0].removed == ["a1"]
    assert (diff.counts.claims_unchanged, diff.counts.sources_unchanged) == (1, 1)
    assert diff.changed


def test_a_different_claim_without_a_shared_source_is_not_taken_for_a_change() -> None:
    before = _snapshot([("The rate limit is 100 requests per minute.", [A])], {A: "a1"})
    after = _snapshot([("The rate limit is 100 requests per hour.", [B])], {B: "b1"})
    alike = compare(before, after, _numbered(B))
    assert [c.status for c in alike.claims] == ["changed"]  # nearly the same words, no shared source
    after = _snapshot([("Quotas are set per team by an administrator.", [B])], {B: "b1"})
    unlike = compare(before, after, _numbered(B))
    assert [c.status for c in unlike.claims] == ["new", "dropped"]
    assert [s.status for s in unlike.sources] == ["new", "gone"]


def test_nothing_changed_is_one_line_after_the_heading_and_follows_a_title() -> None:
    same = _snapshot([("The service runs in three regions.", [B])], {B: "b1"})
    diff = compare(same, same, _numbered(B))
    assert not diff.changed
    assert (
        section(diff)
        == "## What changed since 2026-03-02 06:00 UTC\n\nNothing changed: the same claims, from the same sources."
    )
    titled = with_section("# Regions\n\nThe service runs in three regions. [1]", diff)
    assert titled.startswith("# Regions\n\n## What changed since") and titled.endswith("three regions. [1]")


def test_quoted_text_carries_no_citation_of_this_report() -> None:
    before = _snapshot([("Old claim about quotas and limits [4].", [A])], {A: "a1"})
    after = _snapshot([], {})
    text = section(compare(before, after, []))
    assert "[4]" not in text and "“Old claim about quotas and limits.”" in text


def test_a_scheduled_request_and_its_result_cross_processes_whole() -> None:
    """The worker queue's encoding of a request, and an engine's result as JSON, keep the snapshot and diff."""
    previous = _snapshot([("The service runs in three regions.", [B])], {B: "b1"})
    request = ResearchRequest(question="Q", scheduled=True, previous=previous)
    assert decode_request(encode_request(request)) == request
    diff = compare(previous, previous, _numbered(B))
    result = ResearchResult(status="completed", stop_reason="completed", question="Q", changes=diff, snapshot=previous)
    again = ResearchResult.model_validate_json(result.model_dump_json())
    assert again.changes == diff and again.snapshot == previous
