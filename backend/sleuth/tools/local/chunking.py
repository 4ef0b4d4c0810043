"""Split a document's text into search chunks along headings and paragraphs.

A chunk never crosses a heading, so its `heading` says what it is about; paragraphs are packed
up to a few hundred words so bm25 compares passages of similar length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TARGET_WORDS = 250
MAX_WORDS = 400

_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
# reStructuredText / pydoc style: a line underlined by a run of one punctuation character.
_RST_UNDERLINE = re.compile(r"^([*=\-~^#+])\1{2,}\s*$")
_BLANK_SPLIT = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Chunk:
    heading: str
    body: str


@dataclass
class _Section:
    heading: str
    lines: list[str]


def _sections(text: str, title: str) -> list[_Section]:
    lines = text.splitlines()
    sections = [_Section(title, [])]
    i = 0
    while i < len(lines):
        line = lines[i]
        md = _MD_HEADING.match(line)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if md:
            sections.append(_Section(md.group(2).strip(), []))
        elif line.strip() and _RST_UNDERLINE.match(nxt) and len(nxt.strip()) >= len(line.strip()) - 2:
            sections.append(_Section(line.strip(), []))
            i += 1  # skip the underline
        else:
            sections[-1].lines.append(line)
        i += 1
    return sections


def _split_long(paragraph: str) -> list[str]:
    """Cut a paragraph longer than MAX_WORDS at sentence ends (or, failing that, word counts)."""
    pieces: list[str] = []
    current: list[str] = []
    count = 0
    for sentence in _SENTENCE_END.split(paragraph):
        words = sentence.split()
        while len(words) > MAX_WORDS:  # one giant "sentence": cut by words
            if current:
                pieces.append(" ".join(current))
                current, count = [], 0
            pieces.append(" ".join(words[:MAX_WORDS]))
            words = words[MAX_WORDS:]
        if count + len(words) > MAX_WORDS and current:
            pieces.append(" ".join(current))
            current, count = [], 0
        current.append(" ".join(words))
        count += len(words)
    if current:
        pieces.append(" ".join(current))
    return [p for p in pieces if p.strip()]


def _pack(paragraphs: list[str]) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    count = 0
    for para in paragraphs:
        n = len(para.split())
        if n > MAX_WORDS:
            if current:
                chunks.append("\n\n".join(current))
                current, count = [], 0
            chunks.extend(_split_long(para))
            continue
        if current and (count >= TARGET_WORDS or count + n > MAX_WORDS):
            chunks.append("\n\n".join(current))
            current, count = [], 0
        current.append(para)
        count += n
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def chunk_text(text: str, title: str) -> list[Chunk]:
    """Chunks of `text`; sections before the first heading get the document title as heading."""
    chunks: list[Chunk] = []
    for section in _sections(text, title):
        paragraphs = [p.strip("\n") for p in _BLANK_SPLIT.split("\n".join(section.lines)) if p.strip()]
        for body in _pack(paragraphs):
            chunks.append(Chunk(heading=section.heading, body=body))
    if not chunks and title.strip():
        # A document that is only a title is still findable by it.
        chunks.append(Chunk(heading=title, body=title))
    return chunks
