"""Verification of the final report's citations and links against what the run retrieved."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sleuth.core.markdown import CITATION_REMOVED, image_as_text, images_in, outside_code, rewrite_citations
from sleuth.research.sources import SourceRegistry, UnsafeUrlCheck
from sleuth.stream.documents import Document
from sleuth.stream.packets import NumberedSource, RemovedCitation
from sleuth.stream.results import ClaimVerdict

_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)")
# Raw HTML has no place in a report: clients render markdown, and other readers of the API
# must not receive live markup. Script-like elements go with their content; other tags keep it.
_HTML_BLOCK = re.compile(r"<(script|style|iframe|object|embed|template|noscript)\b.*?(?:</\1\s*>|$)", re.I | re.S)
_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>", re.S)
_BARE_URL = re.compile(r"(?<![(\[<\"'])\b(?:https?|ftp|file|javascript|data)://[^\s)\]>]+", re.I)


@dataclass
class VerifiedReport:
    markdown: str
    sources: list[NumberedSource]
    removed: list[RemovedCitation]
    claims: list[ClaimVerdict] = field(default_factory=list)  # one per checked citation marker
    # The report's number for each number the model was given and the report kept: what else was
    # written from the same numbered sources (the artifact) is renumbered with it.
    numbers: dict[int, int] = field(default_factory=dict)


def verify_report(
    markdown: str, given: dict[int, Document], registry: SourceRegistry, unsafe_reason: UnsafeUrlCheck
) -> VerifiedReport:
    """Keep only citations of documents really retrieved, strip unsafe or unknown links, renumber 1..k.

    A claim whose every citation is removed keeps `CITATION_REMOVED` where they stood: marked as
    unbacked, not silently kept as if it needed none."""
    removed: list[RemovedCitation] = []
    final: dict[str, int] = {}
    numbers: dict[int, int] = {}
    ordered: list[Document] = []

    def check(n: int) -> int | None:
        document = given.get(n)
        reason: str | None = None
        if document is None:
            reason = "no source with this number was given to the report"
        elif document.id not in registry:
            reason = "the source was not retrieved by any tool"
        else:
            reason = unsafe_reason(document.url)
        if reason is not None or document is None:
            removed.append(RemovedCitation(marker=f"[{n}]", reason=reason or "unknown source"))
            return None
        if document.id not in final:
            final[document.id] = len(ordered) + 1
            ordered.append(document)
        numbers[n] = final[document.id]
        return numbers[n]

    def links(segment: str) -> str:
        def link(match: re.Match[str]) -> str:
            label, url = match.group(1), match.group(2).strip("<>")
            reason = unsafe_reason(url) or (None if registry.by_url(url) else "the URL was not retrieved by any tool")
            if reason:
                removed.append(RemovedCitation(marker=url, reason=reason))
                return label
            return match.group(0)

        def bare(match: re.Match[str]) -> str:
            url = match.group(0).rstrip(".,;:")
            tail = match.group(0)[len(url) :]
            reason = unsafe_reason(url) or (None if registry.by_url(url) else "the URL was not retrieved by any tool")
            if reason:
                removed.append(RemovedCitation(marker=url, reason=reason))
                return "" + tail
            return match.group(0)

        return _BARE_URL.sub(bare, _LINK.sub(link, segment))

    def images(segment: str) -> str:
        """No image is loaded by a client: each becomes its alt text, and its URL stays, as text,
        only when it is a source a tool retrieved."""

        def image(alt: str, url: str) -> str:
            reason = unsafe_reason(url) or (None if registry.by_url(url) else "the URL was not retrieved by any tool")
            if reason:
                removed.append(RemovedCitation(marker=url, reason=f"image not shown: {reason}"))
                return alt
            return image_as_text(alt, url)

        return images_in(segment, image)

    def html(segment: str) -> str:
        def drop(match: re.Match[str]) -> str:
            removed.append(RemovedCitation(marker=match.group(0)[:120], reason="raw HTML removed from the report"))
            return ""

        return _HTML_TAG.sub(drop, _HTML_BLOCK.sub(drop, segment))

    text = outside_code(
        rewrite_citations(markdown, check, emptied=CITATION_REMOVED), lambda segment: links(images(html(segment)))
    )
    sources = [NumberedSource(number=i, **doc.model_dump()) for i, doc in enumerate(ordered, 1)]
    return VerifiedReport(markdown=text.strip(), sources=sources, removed=removed, numbers=numbers)
