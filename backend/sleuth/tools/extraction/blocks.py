"""A document's text as blocks to read: headings, reflowed paragraphs, list items, code and tables.

Stored text keeps the shape its source gave it: CPython's pydoc topics are hard-wrapped at 70
columns with headings underlined by `****`, `====` or `----`, a PDF gives one line per printed
line, an HTML page arrives as the markdown-like text of `html.py`, an upload as markdown or plain
text. Search wants that text as it is; a reader wants paragraphs that flow and structure that
shows. These blocks are text only: a client renders each as text in an element of its own kind,
never as markup, so nothing in a document can become HTML.

The reading is line-based and linear: blank lines separate groups, a group's indentation says
where it sits (a list item's continuation, a definition's body, an example), and what a group is
comes from its lines alone (a marker, an underline, table borders, prompts and code punctuation).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Literal

from pydantic import BaseModel, Field

# Markdown's `# Heading`, and reStructuredText's (and pydoc's) heading underlined by a run of one
# punctuation character. The search chunker splits sections by the same two rules.
MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
UNDERLINE = re.compile(r"^([*=\-~^#+])\1{2,}\s*$")


def underlines(line: str, under: str) -> bool:
    """Whether `under` underlines `line` as a heading: a run of one punctuation character about as long."""
    return (
        bool(line.strip())
        and len(under) < 200
        and UNDERLINE.match(under) is not None
        and len(under.strip()) >= len(line.strip()) - 2
    )


class Heading(BaseModel):
    """A heading; level 1 is the outermost the document uses."""

    kind: Literal["heading"]
    level: int = Field(ge=1, le=6)
    text: str


class Paragraph(BaseModel):
    """Prose, its hard line breaks reflowed into one line."""

    kind: Literal["paragraph"]
    text: str
    depth: int = Field(ge=0, description="How far it is indented: inside a list item, a definition or a quote.")


class Term(BaseModel):
    """A line the indented paragraphs after it define or explain (a signature, `Note:`)."""

    kind: Literal["term"]
    text: str
    depth: int = Field(ge=0)


class Item(BaseModel):
    """A list item: its marker as written (`*`, `1.`, `[2]`) and its reflowed text."""

    kind: Literal["item"]
    marker: str
    text: str
    depth: int = Field(ge=0)


class Code(BaseModel):
    """Code, a grammar or an interactive session, line for line."""

    kind: Literal["code"]
    text: str
    depth: int = Field(ge=0)


class Table(BaseModel):
    """A table's cells as text, row by row; `header` says the first row is its heading."""

    kind: Literal["table"]
    rows: list[list[str]]
    header: bool
    depth: int = Field(ge=0)


TextBlock = Annotated[Heading | Paragraph | Term | Item | Code | Table, Field(discriminator="kind")]

_ITEM = re.compile(r"^( *)([-*+•]|\d{1,3}[.)]|[IVX]{1,4}\.|\(\d{1,3}\)|\[\d{1,3}\])( +)(\S.*)$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_GRID_BORDER = re.compile(r"^\+(?:[-=]+\+)+$")
_GRID_HEADER = re.compile(r"^[+|](?:=+[+|])+$")
_MD_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_PROMPT = re.compile(r"^(?:>>>|\.\.\.)(?: |$)|::=|^\$ ")
_WORD = re.compile(r"^[(\"'“‘*]*[A-Za-z][A-Za-z'’-]*[)\"'”’*,.;:!?]*$")
_SENTENCE_END = re.compile(r"[.!?:][)\"'”’]?$")
_SPACES = re.compile(r" {2,}")
_ALIGNED = re.compile(r"\S {3,}\S")
_SIGNATURE = re.compile(r"^(?:class |async def |def )?[A-Za-z_][\w.]*\(.*\)$")
# Of a group's words, the share that are plain words; prose is mostly words, code mostly not.
_PROSE_SHARE = 0.65
_MOSTLY_WORDS = 0.8
_TERM_MAX_CHARS = 100


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _reflow(lines: list[str]) -> str:
    """Hard-wrapped lines as one line; a word hyphenated across a break is joined again."""
    out = ""
    for line in (raw.strip() for raw in lines):
        if not line:
            continue
        if not out:
            out = line
        elif out.endswith("-") and len(out) > 1 and out[-2].isalpha() and line[:1].islower():
            out += line
        else:
            out += " " + line
    return _SPACES.sub(" ", out)


def _dedent(lines: list[str], cut: int | None = None) -> list[str]:
    """The lines without the indentation they share (blank lines do not count), or without `cut` columns."""
    if cut is None:
        cut = min((_indent(line) for line in lines if line.strip()), default=0)
    return [line[cut:] for line in lines]


def _prose_share(lines: list[str]) -> float:
    tokens = " ".join(lines).split()
    return sum(1 for token in tokens if _WORD.match(token)) / len(tokens) if tokens else 0.0


def _hanging(lines: list[str]) -> bool:
    """A paragraph whose lines after the first are all indented by one amount (a hanging indent)."""
    rest = {_indent(line) for line in lines[1:]}
    return len(rest) == 1 and min(rest) > 0 and _indent(lines[0]) == 0


def _broken_early(lines: list[str], i: int, width: int) -> bool:
    """Line `i` ends before the next line's first word would have filled it: not a wrapped line."""
    text = lines[i].strip()
    following = lines[i + 1].split()
    space = 2 if _SENTENCE_END.search(text) else 1  # Sphinx and pydoc put two spaces after a sentence
    return bool(following) and len(text) + space + len(following[0]) <= width


def _is_code(lines: list[str], *, indented: bool) -> bool:
    """Whether a group (its lines dedented) is code rather than prose."""
    if any(_PROMPT.search(line) for line in lines):
        return True
    share = _prose_share(lines)
    ends_sentence = _SENTENCE_END.search(lines[-1].rstrip()) is not None
    if any(_indent(line) for line in lines[1:]):  # lines indented under others: a block structure
        return not (_hanging(lines) and ends_sentence and share >= _PROSE_SHARE)
    if not indented:
        return len(lines) > 1 and share < 0.35
    if any(_ALIGNED.search(line) for line in lines):  # columns lined up with spaces
        return True
    prose = share >= _MOSTLY_WORDS or (ends_sentence and share >= _PROSE_SHARE)
    if len(lines) == 1:
        return not prose or len(lines[0].split()) < 4
    # Wrapped prose fills its lines; lines of code end where their statements do.
    width = max(len(line.strip()) for line in lines)
    return not prose or any(_broken_early(lines, i, width) for i in range(len(lines) - 1))


def _paragraphs(lines: list[str]) -> Iterator[list[str]]:
    """A prose group's paragraphs: one ends at a sentence's end where the line did not need to break."""
    width = max(len(line.strip()) for line in lines)
    start = 0
    for i, line in enumerate(lines[:-1]):
        if _SENTENCE_END.search(line.strip()) and _broken_early(lines, i, width):
            yield lines[start : i + 1]
            start = i + 1
    yield lines[start:]


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT.split(inner)]


def _markdown_table(lines: list[str]) -> tuple[list[list[str]], bool]:
    rows: list[list[str]] = []
    header = False
    for line in lines:
        if _MD_SEPARATOR.match(line.strip()):
            header = header or len(rows) == 1
            continue
        rows.append(_cells(line))
    return rows, header


def _grid_table(lines: list[str]) -> tuple[list[list[str]], bool] | None:
    """A grid table (`+---+` borders, `|` between cells); None when its lines do not keep to its columns."""
    border = lines[0].rstrip()
    cuts = [i for i, ch in enumerate(border) if ch == "+"]
    rows: list[list[str]] = []
    header = False
    current: list[list[str]] | None = None
    for raw in lines[1:]:
        line = raw.rstrip()
        if _GRID_BORDER.match(line) or _GRID_HEADER.match(line):
            if current is not None:
                rows.append([_reflow(cell) for cell in current])
            header = header or ("=" in line and len(rows) == 1)
            current = None
            continue
        if not line.startswith("|") or len(line) != len(border):
            return None
        pieces = [line[a + 1 : b] for a, b in zip(cuts, cuts[1:], strict=False)]
        if current is None:
            current = [[piece] for piece in pieces]
        else:
            for cell, piece in zip(current, pieces, strict=True):
                cell.append(piece)
    if current is not None:
        rows.append([_reflow(cell) for cell in current])
    return (rows, header) if rows else None


class _Reader:
    """Blocks in document order; `levels` holds the text columns of the containers open at this point."""

    def __init__(self) -> None:
        self.blocks: list[TextBlock] = []
        self.levels = [0]
        self.heading_levels: dict[str, int] = {}
        self.last_one_line = False  # the last block is a paragraph of one source line: a term, if a body follows
        self.code_column: int | None = None  # the last block is indented code, cut at this column

    def depth(self) -> int:
        return len(self.levels) - 1

    def close_to(self, column: int) -> None:
        while len(self.levels) > 1 and column < self.levels[-1]:
            self.levels.pop()

    def add(self, block: TextBlock, *, one_line: bool = False) -> None:
        self.blocks.append(block)
        self.last_one_line = one_line
        self.code_column = None

    def heading(self, text: str, level: int) -> None:
        self.levels = [0]
        if text:
            self.add(Heading(kind="heading", level=level, text=_SPACES.sub(" ", text)))

    def underlined(self, text: str, under: str) -> None:
        level = self.heading_levels.setdefault(under.strip()[0], min(len(self.heading_levels) + 1, 6))
        self.heading(text.strip(), level)

    def table(self, lines: list[str]) -> None:
        self.close_to(_indent(lines[0]))
        body = _dedent(lines)
        parsed = _grid_table(body) if _GRID_BORDER.match(body[0].rstrip()) else _markdown_table(body)
        if parsed is None:
            self.add(Code(kind="code", text="\n".join(body), depth=self.depth()))
            return
        rows, header = parsed
        if not rows:  # separators alone: nothing to read
            return
        width = max(len(row) for row in rows)
        rows = [row + [""] * (width - len(row)) for row in rows]
        self.add(Table(kind="table", rows=rows, header=header, depth=self.depth()))

    def text(self, lines: list[str]) -> None:
        """A run of lines that are neither headings nor tables: list items, a quote, code or prose."""
        if _ITEM.match(lines[0]):
            self.items(lines)
            return
        for k in range(1, len(lines)):
            if _ITEM.match(lines[k]) and lines[k - 1].rstrip().endswith(":"):  # "Notes:" then a list
                self.text(lines[:k])
                self.items(lines[k:])
                return
        column = min(_indent(line) for line in lines)
        self.close_to(column)
        body = _dedent(lines)
        if all(line.startswith(">") and not _PROMPT.search(line) for line in body):
            quoted = [line[1:] for line in body]
            self.add(Paragraph(kind="paragraph", text=_reflow(quoted), depth=self.depth() + 1))
            return
        indented = column > self.levels[-1]
        signatures = len(body) > 1 and all(_SIGNATURE.match(line) for line in body)
        definition = (
            not signatures
            and _hanging(body)
            and len(body[0]) <= _TERM_MAX_CHARS
            and not _is_code(_dedent(body[1:]), indented=True)
        )
        if not (signatures or definition) and _is_code(body, indented=indented):
            self.code(lines, column)
            return
        if indented:
            self.levels.append(column)
            self.term_before(self.depth())
        if signatures:  # several signatures the paragraphs after them describe together
            for line in body:
                self.add(Term(kind="term", text=line, depth=self.depth()))
            return
        if definition:  # a term with its explanation indented under it
            self.add(Term(kind="term", text=_SPACES.sub(" ", body[0].strip()), depth=self.depth()))
            self.levels.append(column + _indent(body[1]))
            body = _dedent(body[1:])
        for paragraph in _paragraphs(body):
            self.add(Paragraph(kind="paragraph", text=_reflow(paragraph), depth=self.depth()), one_line=len(body) == 1)

    def code(self, lines: list[str], column: int) -> None:
        """Code; more code right after it, as deep, continues it (an example with blank lines in it)."""
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, Code) and self.code_column is not None and column >= self.code_column:
            text = last.text + "\n\n" + "\n".join(_dedent(lines, self.code_column))
            self.blocks[-1] = Code(kind="code", text=text, depth=last.depth)
            return
        self.add(Code(kind="code", text="\n".join(_dedent(lines)), depth=self.depth()))
        self.code_column = column

    def term_before(self, depth: int) -> None:
        """An indented paragraph explains the one-line paragraph just above it, which is then a term."""
        last = self.blocks[-1] if self.blocks else None
        if (
            self.last_one_line
            and isinstance(last, Paragraph)
            and last.depth == depth - 1
            and len(last.text) <= _TERM_MAX_CHARS
        ):
            self.blocks[-1] = Term(kind="term", text=last.text, depth=last.depth)

    def items(self, lines: list[str]) -> None:
        marker = ""
        parts: list[str] = []
        depth = 0
        for line in lines:
            found = _ITEM.match(line)
            if found is None:
                parts.append(line)
                continue
            if parts:
                self.add(Item(kind="item", marker=marker, text=_reflow(parts), depth=depth))
            column = len(found.group(1))
            self.close_to(column)
            if column > self.levels[-1]:
                self.levels.append(column)
            depth = self.depth()
            marker = found.group(2)
            parts = [found.group(4)]
            # The item's own text column: its continuation lines and paragraphs sit there.
            self.levels.append(column + len(marker) + len(found.group(3)))
        if parts:
            self.add(Item(kind="item", marker=marker, text=_reflow(parts), depth=depth))


def _is_row(line: str) -> bool:
    return len(line) > 1 and line.startswith("|") and line.endswith("|")


def _runs(group: list[str]) -> Iterator[tuple[Literal["atx", "underlined", "table", "text", "rule"], list[str]]]:
    """A group of non-blank lines cut into headings, tables, rules and runs of other text."""
    if any(_PROMPT.search(line.strip()) for line in group):  # an interactive session prints anything
        yield "text", group
        return
    text: list[str] = []
    i = 0
    while i < len(group):
        line = group[i]
        stripped = line.strip()
        kind: Literal["atx", "underlined", "table", "rule"] | None = None
        size = 1
        if MD_HEADING.match(line) and len(line) < 1000:
            kind = "atx"
        elif i + 1 < len(group) and underlines(line, group[i + 1]) and not stripped.startswith(("|", "+")):
            kind, size = "underlined", 2
        elif _GRID_BORDER.match(stripped):
            kind = "table"
            while i + size < len(group) and group[i + size].strip().startswith(("|", "+")):
                size += 1
        elif _is_row(stripped):
            kind = "table"
            while i + size < len(group) and _is_row(group[i + size].strip()):
                size += 1
        elif UNDERLINE.match(stripped):
            kind = "rule"
        if kind is None:
            text.append(line)
            i += 1
            continue
        if text:
            yield "text", text
            text = []
        yield kind, group[i : i + size]
        i += size
    if text:
        yield "text", text


def _groups(text: str) -> Iterator[tuple[int | None, list[str]]]:
    """(the fence's column, or None; lines): runs of non-blank lines, and fenced code with its blank lines."""
    lines = [line.rstrip() for line in text.expandtabs(4).replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    group: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence and not (group and underlines(group[-1], line)):
            if group:
                yield None, group
                group = []
            close = fence.group(1)[0] * len(fence.group(1))
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(close)), len(lines))
            yield _indent(line), lines[i + 1 : end]
            i = end + 1
            continue
        if line.strip():
            group.append(line)
        elif group:
            yield None, group
            group = []
        i += 1
    if group:
        yield None, group


def text_blocks(text: str) -> list[TextBlock]:
    """The blocks of a document's text, in order (see the module's docstring)."""
    reader = _Reader()
    for fence, group in _groups(text):
        if fence is not None:
            reader.close_to(fence)
            if any(line.strip() for line in group):
                reader.add(Code(kind="code", text="\n".join(_dedent(group)).strip("\n"), depth=reader.depth()))
            continue
        for kind, lines in _runs(group):
            if kind == "atx":
                found = MD_HEADING.match(lines[0])
                assert found is not None
                reader.heading(found.group(2), len(found.group(1)))
            elif kind == "underlined":
                reader.underlined(lines[0], lines[1])
            elif kind == "table":
                reader.table(lines)
            elif kind == "text":
                reader.text(lines)
    return reader.blocks
