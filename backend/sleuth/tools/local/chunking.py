"""Split a document's text into search chunks along headings and paragraphs.

A chunk never crosses a heading, so its `heading` says what it is about; paragraphs are packed
up to a few hundred words so bm25 compares passages of similar length.

Linear in the text's length and streaming: lines are read one at a time and only the section
being packed is held, so a big file costs its own text plus one chunk, never a list of every
word (slicing word lists would be quadratic on unpunctuated text).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from sleuth.tools.extraction.blocks import MD_HEADING, underlines

TARGET_WORDS = 250
MAX_WORDS = 400

_SENTENCE_END = re.compile(r"[.!?]$")
_WORD = re.compile(r"\S+")
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


@dataclass(frozen=True)
class Chunk:
    heading: str
    body: str


def _lines(text: str) -> Iterator[str]:
    for match in _LINE.finditer(text):
        yield match.group().rstrip("\r\n")


def _paragraphs(text: str, title: str) -> Iterator[tuple[str, str]]:
    """(heading, paragraph) pairs in order; a heading starts a new section."""
    heading = title
    para: list[str] = []
    lines = _lines(text)
    pending = next(lines, None)
    while pending is not None:
        line = pending
        pending = next(lines, None)
        md = MD_HEADING.match(line) if len(line) < 1000 else None
        is_rst = pending is not None and underlines(line, pending)
        if md or is_rst:
            if para:
                yield heading, "\n".join(para)
                para = []
            yield heading, ""  # a section boundary, even if empty
            heading = md.group(2).strip() if md else line.strip()
            if is_rst:
                pending = next(lines, None)  # skip the underline
            continue
        if line.strip():
            para.append(line)
        elif para:
            yield heading, "\n".join(para)
            para = []
    if para:
        yield heading, "\n".join(para)


def _split_long(paragraph: str) -> Iterator[str]:
    """Cut a paragraph longer than MAX_WORDS at sentence ends (or, failing that, every MAX_WORDS words).

    One pass over word positions: a piece is a slice of the paragraph, never a list of its words.
    """
    start = None
    count = 0
    last_sentence_end = None  # (end offset, words up to it)
    for match in _WORD.finditer(paragraph):
        if start is None:
            start = match.start()
        count += 1
        if _SENTENCE_END.search(match.group()):
            last_sentence_end = (match.end(), count)
        if count >= MAX_WORDS:
            if last_sentence_end is not None and last_sentence_end[1] * 2 >= MAX_WORDS:
                cut, used = last_sentence_end
            else:
                cut, used = match.end(), count
            yield " ".join(paragraph[start:cut].split())
            start, count, last_sentence_end = None, count - used, None
            if count:
                # Words after the sentence end start the next piece.
                rest = _WORD.search(paragraph, cut)
                start = rest.start() if rest else None
    if start is not None and count:
        piece = " ".join(paragraph[start:].split())
        if piece:
            yield piece


def _word_count(text: str, limit: int) -> int:
    """Words in `text`, counting no further than `limit + 1` (enough to decide "too long")."""
    n = 0
    for _ in _WORD.finditer(text):
        n += 1
        if n > limit:
            break
    return n


def iter_chunks(text: str, title: str) -> Iterator[Chunk]:
    """Chunks of `text`, lazily; sections before the first heading get the document title as heading."""
    current: list[str] = []
    count = 0
    heading = title
    emitted = False
    for para_heading, para in _paragraphs(text, title):
        if para_heading != heading or not para:
            if current:
                yield Chunk(heading, "\n\n".join(current))
                emitted = True
            current, count = [], 0
            heading = para_heading
            if not para:
                continue
        n = _word_count(para, MAX_WORDS)
        if n > MAX_WORDS:
            if current:
                yield Chunk(heading, "\n\n".join(current))
                current, count = [], 0
            for piece in _split_long(para):
                yield Chunk(heading, piece)
                emitted = True
            continue
        if current and (count >= TARGET_WORDS or count + n > MAX_WORDS):
            yield Chunk(heading, "\n\n".join(current))
            emitted = True
            current, count = [], 0
        current.append(para)
        count += n
    if current:
        yield Chunk(heading, "\n\n".join(current))
        emitted = True
    if not emitted and title.strip():
        # A document that is only a title is still findable by it.
        yield Chunk(heading=title, body=title)


def chunk_text(text: str, title: str) -> list[Chunk]:
    """Every chunk of `text` (see `iter_chunks`)."""
    return list(iter_chunks(text, title))
