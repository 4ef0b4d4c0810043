"""Report markdown as the engine, the exports and the narration read it: citation markers `[n]`,
images, and code (where neither is one), found as a CommonMark parser sees them."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Literal

from sleuth.core import heavy

# A run of adjacent markers: `[3]`, `[1, 2]`, `[1][4]` -- but not `items[0]`, `f(x)[1]` or a link `[1](url)`.
_CITATION = re.compile(r"(?P<space>[ \t]*)(?<![\w)\]`])(?P<run>(?:\[\d{1,4}(?:\s*,\s*\d{1,4})*\])+)(?!\()")
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

# Where a claim's citation stood before verification removed it: the sentence stays, marked, so a
# reader (and every client and export, which show it as the text it is) sees that nothing backs it.
CITATION_REMOVED = "[citation removed]"


@cache
def _markdown() -> heavy.MarkdownIt:
    return heavy.MarkdownIt("commonmark")


@lru_cache(maxsize=16)
def _code_ranges(text: str) -> tuple[tuple[int, int], ...]:
    """Where `text` holds code, as a CommonMark parser (and so the browser's renderer) sees it.

    Fenced (``` and ~~~) and indented blocks come with their lines; inline code spans, whose
    tokens carry no offsets, are found in their paragraph's lines by their backtick run. Kept for
    the last texts asked: publishing a report reads its citations and sentences several times.
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
    return tuple(sorted(ranges))


def outside_code(text: str, fn: Callable[[str], str]) -> str:
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

    outside_code(text, collect)
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


def rewrite_citations(text: str, mapping: Callable[[int], int | None], *, emptied: str = "") -> str:
    """Replace each cited number via `mapping`; numbers mapped to None are dropped, and a run of
    markers that loses all of them becomes `emptied` (nothing by default)."""

    def one(match: re.Match[str]) -> str:
        kept: list[int] = []
        for raw in re.findall(r"\d+", match.group("run")):
            new = mapping(int(raw))
            if new is not None and new not in kept:
                kept.append(new)
        if kept:
            return match.group("space") + "".join(f"[{n}]" for n in kept)
        # a marker removed entirely takes its leading space with it ("fact [9]." -> "fact.")
        return f" {emptied}" if emptied else ""

    def part(segment: str) -> str:
        return _CITATION.sub(one, segment)

    return outside_code(text, part)


def rewrite_images(text: str, replace: Callable[[str, str], str]) -> str:
    """Each markdown image outside code replaced by `replace(alt, url)`, so that no renderer loads one.

    An image this cannot take apart (a reference image, `![alt][ref]`) keeps its text but loses its
    opening `![`: it renders as the text it is, never as an image.
    """
    if "![" not in text:  # no image opens without it; spares the parse
        return text
    return outside_code(text, lambda segment: images_in(segment, replace))


def images_in(segment: str, replace: Callable[[str, str], str]) -> str:
    def one(match: re.Match[str]) -> str:
        url = match.group("url")
        url = url[1:-1] if url.startswith("<") else url
        return match.group("escapes") + replace(images_in(match.group("alt"), replace), url)

    return _IMAGE_OPENING.sub(r"\1!\\[", _IMAGE.sub(one, segment))


def image_caption(alt: str, url: str) -> str:
    """What a reader is shown instead of an image: its alt text and its URL, as text."""
    alt = alt.strip()
    return f"{alt} ({url})" if alt and url else alt or url


def image_as_text(alt: str, url: str) -> str:
    """`image_caption` as markdown: the URL's markdown marks escaped, so it shows as written."""
    return image_caption(alt, _MARKDOWN_MARKS.sub(r"\\\1", url))


# ---- prose: what a reader reads as sentences -------------------------------------------------

BlockKind = Literal["heading", "paragraph", "item", "code", "table", "quote", "rule"]

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
# A sentence ends at . ! ? (a closing quote or bracket may follow) before a word that does not go
# on in lower case: "e.g. this" and "3.12 added" stay one sentence.
_SENTENCE_BREAK = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"'”’)\]]))\s+(?=[^\sa-z])")
_KEY_MARKS = re.compile(r"[`*]|\\(?=\S)")


def blocks(markdown: str) -> list[tuple[BlockKind, str]]:
    """The report's blocks in order, as (kind, text): a paragraph's lines joined by spaces, a list
    item without its bullet, a heading without its `#`s, code and tables as written."""
    out: list[tuple[BlockKind, str]] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence.group(1))), len(lines))
            out.append(("code", "\n".join(lines[i : end + 1])))
            i = end + 1
            continue
        stripped = line.strip()
        if not stripped:
            i += 1
        elif _HEADING_LINE.match(line):
            out.append(("heading", stripped.lstrip("#").strip()))
            i += 1
        elif _RULE.match(line):
            out.append(("rule", stripped))
            i += 1
        elif stripped.startswith("|"):
            end = next((j for j in range(i, len(lines)) if not lines[j].strip().startswith("|")), len(lines))
            out.append(("table", "\n".join(lines[i:end])))
            i = end
        elif stripped.startswith(">"):
            out.append(("quote", stripped.lstrip("> ")))
            i += 1
        elif _ITEM.match(line):
            out.append(("item", _ITEM.sub("", line, count=1).strip()))
            i += 1
        else:
            paragraph = [stripped]
            i += 1
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                paragraph.append(lines[i].strip())
                i += 1
            out.append(("paragraph", " ".join(paragraph)))
    return out


def _starts_block(line: str) -> bool:
    return bool(
        _FENCE.match(line) or _HEADING_LINE.match(line) or _ITEM.match(line) or line.strip().startswith(("|", ">"))
    )


def sentences(text: str) -> list[str]:
    """The sentences of one block of prose, citation markers removed."""
    plain = " ".join(_unmarked(text).split())
    return [s.strip() for s in _SENTENCE_BREAK.split(plain) if s.strip()]


PROSE: frozenset[BlockKind] = frozenset({"paragraph", "item", "quote"})


def prose_sentences(markdown: str) -> list[str]:
    """Every sentence a reader reads, in order: headings, code and tables left out; "2. define a
    name" opens a list item, whose sentence is "define a name"."""
    return [sentence for kind, text in blocks(markdown) if kind in PROSE for sentence in sentences(text)]


def sentence_key(sentence: str) -> str:
    """What two sentences share when they say the same words: no markers, list mark ("2. " in the
    middle of a summary opens a list item at the start of a line), code or emphasis marks, case,
    spacing or closing punctuation."""
    plain = _KEY_MARKS.sub("", _ITEM.sub("", _unmarked(sentence), count=1)).lower()
    return " ".join(plain.split()).rstrip(" .!?:;")


def _unmarked(text: str) -> str:
    return rewrite_citations(text, lambda _n: None) if "[" in text else text  # no marker: spare the parse
