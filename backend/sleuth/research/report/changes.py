"""What changed since a schedule's previous run: the snapshot a run keeps, the diff of two
snapshots, and the "What changed since …" section that opens the report.

A snapshot holds the report's cited sentences (claims) with the URLs they cite, and each cited
source with the SHA-256 of the text the run read and that text in passages. Comparing two:

- sources by URL: new, gone, or changed (another hash), with the passages added and removed;
- claims matched deterministically: the same sentence (`sentence_key`) is unchanged; of the rest,
  a pair that shares a cited URL and reads alike, or reads nearly the same without one, is
  changed (the most alike first, each claim in one pair); what is left is new or dropped.

The section cites with the report's own numbers, so it is checked and rendered like the rest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import datetime
from difflib import SequenceMatcher

from sleuth.core.markdown import CITATION_REMOVED, rewrite_citations, sentence_key
from sleuth.stream.documents import normalise_url
from sleuth.stream.packets import ChangeCounts, ChangeSet, ClaimChange, NumberedSource, SourceChange
from sleuth.stream.results import ClaimVerdict, Snapshot, SnapshotClaim, SnapshotSource

# Two claims citing a common source are the same claim, changed, from this similarity on; without a
# common source they must read nearly the same.
SHARED_SOURCE_SIMILARITY = 0.6
UNSHARED_SIMILARITY = 0.85
MAX_PASSAGES_KEPT = 400  # per source in a snapshot
MAX_PASSAGE_CHARS = 600
MAX_PASSAGES_SHOWN = 5  # added or removed, per changed source, in the diff
SHOWN_CHARS = 300
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def passages(text: str) -> list[str]:
    """The text's paragraphs, each on one line (documents are often hard-wrapped)."""
    found = [" ".join(part.split()) for part in _PARAGRAPH_BREAK.split(text)]
    return [p[:MAX_PASSAGE_CHARS] for p in found if p][:MAX_PASSAGES_KEPT]


def snapshot_of(
    report_id: str, taken_at: datetime, claims: list[ClaimVerdict], sources: list[NumberedSource], texts: dict[int, str]
) -> Snapshot:
    """What this run found: its cited sentences with their sources' URLs, and each cited source's text."""
    by_marker = {f"[{s.number}]": s.url for s in sources}
    grouped: dict[str, list[str]] = {}
    for verdict in claims:
        url = by_marker.get(verdict.marker)
        if url is None or verdict.marker == CITATION_REMOVED:
            continue
        urls = grouped.setdefault(verdict.sentence, [])
        if url not in urls:
            urls.append(url)
    kept = [
        SnapshotSource(
            url=source.url,
            title=source.title,
            sha256=hashlib.sha256(texts.get(source.number, "").encode()).hexdigest(),
            passages=passages(texts.get(source.number, "")),
        )
        for source in sources
    ]
    return Snapshot(
        taken_at=taken_at.isoformat(timespec="seconds"),
        report_id=report_id,
        claims=[SnapshotClaim(sentence=sentence, urls=urls) for sentence, urls in grouped.items()],
        sources=kept,
    )


def _similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, sentence_key(a), sentence_key(b), autojunk=False).ratio()


def _shown(items: Iterable[str]) -> list[str]:
    return [item if len(item) <= SHOWN_CHARS else item[: SHOWN_CHARS - 1] + "…" for item in items][:MAX_PASSAGES_SHOWN]


def _source_changes(previous: Snapshot, current: Snapshot, numbers: dict[str, int]) -> tuple[list[SourceChange], int]:
    before = {normalise_url(s.url): s for s in previous.sources}
    after = {normalise_url(s.url): s for s in current.sources}
    changes: list[SourceChange] = []
    unchanged = 0
    for key, source in after.items():
        number = numbers.get(key)
        old = before.get(key)
        if old is None:
            changes.append(SourceChange(status="new", url=source.url, title=source.title, number=number))
        elif old.sha256 != source.sha256:
            was, now = set(old.passages), set(source.passages)
            changes.append(
                SourceChange(
                    status="changed",
                    url=source.url,
                    title=source.title,
                    number=number,
                    added=_shown(p for p in source.passages if p not in was),
                    removed=_shown(p for p in old.passages if p not in now),
                )
            )
        else:
            unchanged += 1
    changes += [
        SourceChange(status="gone", url=old.url, title=old.title) for key, old in before.items() if key not in after
    ]
    return changes, unchanged


def _claim_changes(previous: Snapshot, current: Snapshot, numbers: dict[str, int]) -> tuple[list[ClaimChange], int]:
    old_claims = {sentence_key(c.sentence): c for c in previous.claims}
    new_claims = {sentence_key(c.sentence): c for c in current.claims}
    same = set(old_claims) & set(new_claims)
    old_left = [c for key, c in old_claims.items() if key not in same]
    new_left = [c for key, c in new_claims.items() if key not in same]
    candidates: list[tuple[float, int, int]] = []
    for i, old in enumerate(old_left):
        old_urls = {normalise_url(u) for u in old.urls}
        for j, new in enumerate(new_left):
            shared = bool(old_urls & {normalise_url(u) for u in new.urls})
            score = _similarity(old.sentence, new.sentence)
            if score >= (SHARED_SOURCE_SIMILARITY if shared else UNSHARED_SIMILARITY):
                candidates.append((score, i, j))
    paired: dict[int, int] = {}
    taken: set[int] = set()
    for _score, i, j in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if i not in paired and j not in taken:
            paired[i] = j
            taken.add(j)

    def numbered(claim: SnapshotClaim) -> list[int]:
        return sorted({numbers[k] for k in (normalise_url(u) for u in claim.urls) if k in numbers})

    changes: list[ClaimChange] = []
    for j, new in enumerate(new_left):
        old_index = next((i for i, pj in paired.items() if pj == j), None)
        if old_index is None:
            changes.append(ClaimChange(status="new", sentence=new.sentence, numbers=numbered(new), urls=new.urls))
        else:
            changes.append(
                ClaimChange(
                    status="changed",
                    sentence=new.sentence,
                    previous=old_left[old_index].sentence,
                    numbers=numbered(new),
                    urls=new.urls,
                )
            )
    changes += [
        ClaimChange(status="dropped", sentence=old.sentence, urls=old.urls)
        for i, old in enumerate(old_left)
        if i not in paired
    ]
    return changes, len(same)


def compare(previous: Snapshot, current: Snapshot, sources: list[NumberedSource]) -> ChangeSet:
    """The diff of this run's snapshot with the previous run's, numbered as this report cites."""
    numbers = {normalise_url(s.url): s.number for s in sources}
    source_changes, sources_unchanged = _source_changes(previous, current, numbers)
    claim_changes, claims_unchanged = _claim_changes(previous, current, numbers)

    def count(items: Iterable[SourceChange | ClaimChange], status: str) -> int:
        return sum(1 for item in items if item.status == status)

    counts = ChangeCounts(
        sources_new=count(source_changes, "new"),
        sources_gone=count(source_changes, "gone"),
        sources_changed=count(source_changes, "changed"),
        sources_unchanged=sources_unchanged,
        claims_new=count(claim_changes, "new"),
        claims_dropped=count(claim_changes, "dropped"),
        claims_changed=count(claim_changes, "changed"),
        claims_unchanged=claims_unchanged,
    )
    return ChangeSet(
        since=previous.taken_at,
        previous_report_id=previous.report_id,
        changed=bool(source_changes or claim_changes),
        counts=counts,
        sources=source_changes,
        claims=claim_changes,
    )


def apply_labels(changes: ChangeSet, labels: dict[int, str]) -> ChangeSet:
    """The diff after the model's labels (by index in `changes.claims`): a pair it calls `unchanged`
    is no change; `updated` and `contradicted` label the change. With no label, nothing moves."""
    if not labels:
        return changes
    claims: list[ClaimChange] = []
    unchanged = 0
    for index, claim in enumerate(changes.claims):
        label = labels.get(index)
        if claim.status != "changed" or label is None:
            claims.append(claim)
        elif label == "unchanged":
            unchanged += 1
        else:
            claims.append(claim.model_copy(update={"label": label}))
    counts = changes.counts.model_copy(
        update={
            "claims_changed": changes.counts.claims_changed - unchanged,
            "claims_unchanged": changes.counts.claims_unchanged + unchanged,
        }
    )
    return changes.model_copy(
        update={
            "claims": claims,
            "counts": counts,
            "changed": bool(claims or changes.sources),
            "matched_by": "model",
        }
    )


def _since(taken_at: str) -> str:
    try:
        return datetime.fromisoformat(taken_at).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return taken_at


def _cite(numbers: list[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def _plain(text: str) -> str:
    """A claim or passage quoted in the section: markers it carries belong to another report (or to no
    report), so none is left to read as a citation of this one."""
    unmarked = rewrite_citations(text, lambda _n: None)
    return " ".join(unmarked.replace("[", "(").replace("]", ")").split())


def section(changes: ChangeSet) -> str:
    """The markdown that opens the report: one line when nothing changed."""
    heading = f"## What changed since {_since(changes.since)}"
    if not changes.changed:
        return f"{heading}\n\nNothing changed: the same claims, from the same sources."
    lines: list[str] = []
    for claim in changes.claims:
        cite = f" {_cite(claim.numbers)}" if claim.numbers else ""
        if claim.status == "changed":
            kind = "Contradicts the previous report" if claim.label == "contradicted" else "Changed"
            before = _plain(claim.previous or "")
            lines.append(f"- **{kind}:** {_plain(claim.sentence)}{cite} (before: “{before}”)")
        elif claim.status == "new":
            lines.append(f"- **New:** {_plain(claim.sentence)}{cite}")
        else:
            lines.append(f"- **No longer found:** “{_plain(claim.sentence)}”")
    for source in changes.sources:
        name = source.title or source.url
        cite = f" [{source.number}]" if source.number is not None else ""
        if source.status == "changed":
            detail = "; ".join(
                [f"now says “{_plain(p)}”" for p in source.added[:2]]
                + [f"no longer says “{_plain(p)}”" for p in source.removed[:2]]
            )
            lines.append(f"- **Source changed:** {name}{cite}" + (f": {detail}" if detail else ""))
        elif source.status == "new":
            lines.append(f"- **New source:** {name}{cite}")
        else:
            lines.append(f"- **Source no longer cited:** {name} ({source.url})")
    counts = changes.counts
    tally = (
        f"{counts.claims_changed} changed, {counts.claims_new} new and {counts.claims_dropped} dropped claims "
        f"({counts.claims_unchanged} unchanged); {counts.sources_changed} changed, {counts.sources_new} new and "
        f"{counts.sources_gone} gone sources ({counts.sources_unchanged} unchanged)."
    )
    return "\n".join([heading, "", tally, "", *lines])


def with_section(markdown: str, changes: ChangeSet) -> str:
    """The report opening with the section (after its title, when it has one)."""
    block = section(changes)
    first, newline, rest = markdown.partition("\n")
    if first.startswith("# "):
        return f"{first}\n\n{block}\n\n{rest.lstrip()}"
    return f"{block}\n\n{markdown}" if markdown else block
