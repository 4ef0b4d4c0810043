"""Citation markers: one global numbering across agents, and verification of the final report."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from sleuth.research.sources import SourceRegistry
from sleuth.stream.documents import Document
from sleuth.stream.packets import NumberedSource, RemovedCitation

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

    from sleuth.research.report.claims import ClaimVerdict

# A run of adjacent markers: `[3]`, `[1, 2]`, `[1][4]` -- but not `items[0]`, `f(x)[1]` or a link `[1](url)`.
_CITATION = re.compile(r"(?P<space>[ \t]*)(?<![\w)\]`])(?P<run>(?:\[\d{1,4}(?:\s*,\s*\d{1,4})*\])+)(?!\()")
_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)")
# Raw HTML has no place in a report: clients render markdown, and other readers of the API
# must not receive live markup. Script-like elements go with their content; other tags keep it.
_HTML_BLOCK = re.compile(r"<(script|style|iframe|object|embed|template|noscript)\b.*?(?:</\1\s*>|$)", re.I | re.S)
_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>", re.S)
_BARE_URL = re.compile(r"(?<![(\[<\"'])\b(?:https?|ftp|file|javascript|data)://[^\s)\]>]+", re.I)
# An inline image, `![alt](url "title")` (`\![` is text; `\\![` is an escaped backslash, then an image).
# The alt may hold one level of brackets; the URL may be `<...>` or hold one level of parentheses.
# Bounded, so that text full of unclosed `![` is scanned in linear time; longer ones meet _IMAGE_OPENING.
_IMAGE = re.compile(
    r"(?<!\\)(?P<escapes>(?:\\\\)*)!\[(?P<alt>(?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.){0,200}\]){0,500})\]"
    r"\(\s*(?P<url><[^<>\n]{0,2000}>|(?:[^()\s\\]|\\.|\([^()\s]{0,500}\)){0,2000})"
    r"(?:\s+(?:\"(?:[^\"\\]|\\.){0,1000}\"|'(?:[^'\\]|\\.){0,1000}'|\((?:[^()\\]|\\.){0,1000}\)))?\s*\)",
    re.S,
)
# Whatever else opens an image (a reference image `![alt][ref]`, nesting _IMAGE does not follow). A
# citation after an exclamation mark, `![1]`, renders the same as `!\[1]`: literal text, still cited.
_IMAGE_OPENING = re.compile(r"(?<!\\)((?:\\\\)*)!\[")
_MARKDOWN_MARKS = re.compile(r"([\\`*_\[\]<>])")


@cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt  # not at start: a run sends its first packet sooner

    return MarkdownIt("commonmark")


def _code_ranges(text: str) -> list[tuple[int, int]]:
    """Where `text` holds code, as a CommonMark parser (and so the browser's renderer) sees it.

    Fenced (``` and ~~~) and indented blocks come with their lines; inline code spans, whose
    tokens carry no offsets, are found in their paragraph's lines by their backtick run.
    """
    # The parser counts \r\n, \r and \n as line ends (and only those), so offsets stay in `text`.
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    if starts[-1] < len(text):
        starts.append(len(text))
    ranges: list[tuple[int, int]] = []
    for token in _markdown().parse(text):
        if token.map is None:
            continue
        begin, end = starts[token.map[0]], starts[min(token.map[1], len(starts) - 1)]
        if token.type in ("fence", "code_block"):
            ranges.append((begin, end))
        elif token.type == "inline":
            cursor = begin
            for child in token.children or []:
                if child.type != "code_inline":
                    continue
                ticks = re.escape(child.markup)
                span = re.compile(rf"(?<!`){ticks}(?!`).*?(?<!`){ticks}(?!`)", re.S).search(text, cursor, end)
                if span is not None:
                    ranges.append(span.span())
                    cursor = span.end()
    return sorted(ranges)


def _outside_code(text: str, fn: Callable[[str], str]) -> str:
    """Apply `fn` to the parts of markdown that are not code, leaving code untouched."""
    out: list[str] = []
    last = 0
    for start, end in _code_ranges(text):
        if start < last:
            continue
        out.append(fn(text[last:start]))
        out.append(text[start:end])
        last = end
    out.append(fn(text[last:]))
    return "".join(out)


def cited_numbers(text: str) -> list[int]:
    """Every citation number in `text`, in order of appearance (repeats included)."""
    numbers: list[int] = []

    def collect(part: str) -> str:
        for match in _CITATION.finditer(part):
            numbers.extend(int(n) for n in re.findall(r"\d+", match.group("run")))
        return part

    _outside_code(text, collect)
    return numbers


def citation_spans(text: str) -> list[tuple[int, int, list[int]]]:
    """(start, end, numbers) of every run of citation markers outside code, in order."""
    spans: list[tuple[int, int, list[int]]] = []
    offset = 0
    for start, end in _code_ranges(text):
        if start < offset:
            continue
        spans.extend(_spans_in(text[offset:start], offset))
        offset = end
    spans.extend(_spans_in(text[offset:], offset))
    return spans


def _spans_in(segment: str, offset: int) -> list[tuple[int, int, list[int]]]:
    return [
        (offset + m.start("run"), offset + m.end("run"), [int(n) for n in re.findall(r"\d+", m.group("run"))])
        for m in _CITATION.finditer(segment)
    ]


def rewrite_citations(text: str, mapping: Callable[[int], int | None]) -> str:
    """Replace each cited number via `mapping`; numbers mapped to None are dropped."""

    def one(match: re.Match[str]) -> str:
        kept: list[int] = []
        for raw in re.findall(r"\d+", match.group("run")):
            new = mapping(int(raw))
            if new is not None and new not in kept:
                kept.append(new)
        # a marker removed entirely takes its leading space with it ("fact [9]." -> "fact.")
        return match.group("space") + "".join(f"[{n}]" for n in kept) if kept else ""

    def part(segment: str) -> str:
        return _CITATION.sub(one, segment)

    return _outside_code(text, part)


def rewrite_images(text: str, replace: Callable[[str, str], str]) -> str:
    """Each markdown image outside code replaced by `replace(alt, url)`, so that no renderer loads one.

    An image this cannot take apart (a reference image, `![alt][ref]`) keeps its text but loses its
    opening `![`: it renders as the text it is, never as an image.
    """
    if "![" not in text:  # no image opens without it; spares the parse
        return text
    return _outside_code(text, lambda segment: _images_in(segment, replace))


def _images_in(segment: str, replace: Callable[[str, str], str]) -> str:
    def one(match: re.Match[str]) -> str:
        url = match.group("url")
        url = url[1:-1] if url.startswith("<") else url
        return match.group("escapes") + replace(_images_in(match.group("alt"), replace), url)

    return _IMAGE_OPENING.sub(r"\1!\\[", _IMAGE.sub(one, segment))


def image_caption(alt: str, url: str) -> str:
    """What a reader is shown instead of an image: its alt text and its URL, as text."""
    alt = alt.strip()
    return f"{alt} ({url})" if alt and url else alt or url


def image_as_text(alt: str, url: str) -> str:
    """`image_caption` as markdown: the URL's markdown marks escaped, so it shows as written."""
    return image_caption(alt, _MARKDOWN_MARKS.sub(r"\\\1", url))


@dataclass
class Numbering:
    """Citation numbers from 1 in order of first sight: an agent's own, or the run's global one."""

    by_number: dict[int, Document] = field(default_factory=dict)
    by_id: dict[str, int] = field(default_factory=dict)

    def number(self, document: Document) -> int:
        if document.id not in self.by_id:
            n = len(self.by_number) + 1
            self.by_number[n] = document
            self.by_id[document.id] = n
        return self.by_id[document.id]

    def numbered_sources(self) -> list[NumberedSource]:
        return [NumberedSource(number=n, **doc.model_dump()) for n, doc in sorted(self.by_number.items())]


@dataclass
class CollapsedReport:
    text: str
    cited: list[Document]  # in the order of their global numbers
    dropped: list[int]  # local numbers that pointed at no document the agent was shown


def collapse_citations(reports: list[tuple[str, Numbering]], numbering: Numbering) -> list[CollapsedReport]:
    """Renumber each agent's `[n]` into the run's global numbering, in tab order.

    A document already cited elsewhere keeps its number; a number the agent was never shown
    is removed from the text.
    """
    return [_collapse_one(text, local, numbering) for text, local in reports]


def _collapse_one(text: str, local: Numbering, numbering: Numbering) -> CollapsedReport:
    dropped: list[int] = []
    cited_ids: list[str] = []

    def to_global(n: int) -> int | None:
        document = local.by_number.get(n)
        if document is None:
            dropped.append(n)
            return None
        if document.id not in cited_ids:
            cited_ids.append(document.id)
        return numbering.number(document)

    new_text = rewrite_citations(text, to_global)
    cited = sorted((numbering.by_number[numbering.by_id[i]] for i in cited_ids), key=lambda d: numbering.by_id[d.id])
    return CollapsedReport(text=new_text, cited=cited, dropped=dropped)


@dataclass
class VerifiedReport:
    markdown: str
    sources: list[NumberedSource]
    removed: list[RemovedCitation]
    claims: list[ClaimVerdict] = field(default_factory=list)  # one per checked citation marker


UnsafeUrlCheck = Callable[[str], str | None]


def verify_report(
    markdown: str, given: dict[int, Document], registry: SourceRegistry, unsafe_reason: UnsafeUrlCheck
) -> VerifiedReport:
    """Keep only citations of documents really retrieved, strip unsafe or unknown links, renumber 1..k."""
    removed: list[RemovedCitation] = []
    final: dict[str, int] = {}
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
        return final[document.id]

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

        return _images_in(segment, image)

    def html(segment: str) -> str:
        def drop(match: re.Match[str]) -> str:
            removed.append(RemovedCitation(marker=match.group(0)[:120], reason="raw HTML removed from the report"))
            return ""

        return _HTML_TAG.sub(drop, _HTML_BLOCK.sub(drop, segment))

    text = _outside_code(rewrite_citations(markdown, check), lambda segment: links(images(html(segment))))
    sources = [NumberedSource(number=i, **doc.model_dump()) for i, doc in enumerate(ordered, 1)]
    return VerifiedReport(markdown=text.strip(), sources=sources, removed=removed)
