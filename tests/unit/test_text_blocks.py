"""A document's text as blocks to read (tools/extraction/blocks.py): the source viewer's structure."""

from __future__ import annotations

import re
from collections import Counter
from pydoc_data.topics import topics

import pytest

from sleuth.tools.extraction.blocks import Code, Heading, Item, Paragraph, Table, Term, TextBlock, text_blocks
from sleuth.tools.extraction.html import html_document

PYDOC = """\
Compound statements
*******************

Compound statements contain (groups of) other statements; they affect
or control the execution of those other statements in some way.  In
general, compound statements span multiple lines.

   if test1: if test2: print(x)


The "if" statement
==================

Notes:

1. While the "in" and "not in" operations are used only for simple
   containment testing, some sequences also use them:

      >>> "gg" in "eggs"
      True

   What has happened is that the list
   holds references.

2. Concatenating immutable sequences always results in a new object.

   * if concatenating "str" objects, you can build a list and use
     "str.join()" at the end

   * for other types, investigate the class documentation
"""


def _shape(blocks: list[TextBlock]) -> list[tuple[str, int | None, str]]:
    return [(b.kind, getattr(b, "depth", None), getattr(b, "text", "")[:30]) for b in blocks]


def test_pydoc_text_reads_as_headings_reflowed_paragraphs_items_and_code() -> None:
    blocks = text_blocks(PYDOC)
    assert _shape(blocks) == [
        ("heading", None, "Compound statements"),
        ("paragraph", 0, "Compound statements contain (g"),
        ("code", 0, "if test1: if test2: print(x)"),
        ("heading", None, 'The "if" statement'),
        ("paragraph", 0, "Notes:"),
        ("item", 0, 'While the "in" and "not in" op'),
        ("code", 1, '>>> "gg" in "eggs"\nTrue'),
        ("paragraph", 1, "What has happened is that the "),
        ("item", 0, "Concatenating immutable sequen"),
        ("item", 1, 'if concatenating "str" objects'),
        ("item", 1, "for other types, investigate t"),
    ]
    headings = [b for b in blocks if isinstance(b, Heading)]
    assert [(h.level, h.text) for h in headings] == [(1, "Compound statements"), (2, 'The "if" statement')]
    first = blocks[1]
    assert isinstance(first, Paragraph)
    # One line, one space between words: the 70-column breaks and pydoc's two spaces after a full stop are gone.
    assert first.text == (
        "Compound statements contain (groups of) other statements; they affect or control the execution of"
        " those other statements in some way. In general, compound statements span multiple lines."
    )
    items = [b for b in blocks if isinstance(b, Item)]
    assert [i.marker for i in items] == ["1.", "2.", "*", "*"]
    assert items[0].text.endswith("some sequences also use them:")
    assert items[2].text == 'if concatenating "str" objects, you can build a list and use "str.join()" at the end'
    assert not any("***" in getattr(b, "text", "") or "===" in getattr(b, "text", "") for b in blocks)


def test_grid_tables_become_rows_of_cells() -> None:
    text = """\
Intro.

+------------------+----------------------+-------+
| Operation        | Result               | Notes |
|==================|======================|=======|
| "x in s"         | "True" if an item of | (1)   |
|                  | *s* is equal to *x*  |       |
+------------------+----------------------+-------+
| "s + t"          | the concatenation    | (6)   |
+------------------+----------------------+-------+
"""
    table = text_blocks(text)[1]
    assert isinstance(table, Table)
    assert table.header is True
    assert table.rows == [
        ["Operation", "Result", "Notes"],
        ['"x in s"', '"True" if an item of *s* is equal to *x*', "(1)"],
        ['"s + t"', "the concatenation", "(6)"],
    ]


def test_a_grid_that_does_not_keep_its_columns_stays_code() -> None:
    text = "+----+----+\n| a  | b  |\n| too long a line |\n+----+----+\n"
    (block,) = text_blocks(text)
    assert isinstance(block, Code) and block.text == text.rstrip("\n")


def test_markdown_reads_as_headings_fenced_code_tables_and_lists() -> None:
    text = """\
# Quokka feeding

Quokkas feed at night.

## Diet

- grasses
- leaves and
  stems of shrubs

```python
def feed(quokka):

    return quokka.eat()
```

| Food | Season |
| --- | --- |
| grass \\| leaves | all year |

> Quokkas chew
> succulents.
"""
    blocks = text_blocks(text)
    assert _shape(blocks) == [
        ("heading", None, "Quokka feeding"),
        ("paragraph", 0, "Quokkas feed at night."),
        ("heading", None, "Diet"),
        ("item", 0, "grasses"),
        ("item", 0, "leaves and stems of shrubs"),
        ("code", 0, "def feed(quokka):\n\n    return "),
        ("table", 0, ""),
        ("paragraph", 1, "Quokkas chew succulents."),
    ]
    assert [b.level for b in blocks if isinstance(b, Heading)] == [1, 2]
    code = blocks[5]
    assert isinstance(code, Code) and code.text == "def feed(quokka):\n\n    return quokka.eat()"
    table = blocks[6]
    assert (
        isinstance(table, Table) and table.header and table.rows == [["Food", "Season"], ["grass | leaves", "all year"]]
    )


def test_html_pages_keep_their_code_and_tables() -> None:
    page = html_document(
        "<main><h1>Setup</h1><p>Install it, then run:</p><pre>def main():\n    serve()\n</pre>"
        "<ul><li>one</li><li>two</li></ul><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
        "</main>"
    )
    blocks = text_blocks(page.text)
    assert _shape(blocks) == [
        ("heading", None, "Setup"),
        ("paragraph", 0, "Install it, then run:"),
        ("code", 0, "def main():\n    serve()"),
        ("item", 0, "one"),
        ("item", 0, "two"),
        ("table", 0, ""),
    ]


def test_pdf_lines_become_paragraphs_at_sentence_ends_that_did_not_fill_the_line() -> None:
    text = (
        "The lantern protocol negotiates frame sizes during a two step\n"
        "handshake between a client and a server.\n"
        "Frame sizes are powers of two between 512 and 65536 bytes, and the\n"
        "server picks the largest one it supports."
    )
    blocks = text_blocks(text)
    assert [b.text for b in blocks if isinstance(b, Paragraph)] == [
        "The lantern protocol negotiates frame sizes during a two step handshake between a client and a server.",
        "Frame sizes are powers of two between 512 and 65536 bytes, and the server picks the largest one it supports.",
    ]


def test_terms_introduce_the_indented_text_that_explains_them() -> None:
    text = """\
object.__lt__(self, other)
object.__le__(self, other)

   These are the so-called "rich comparison" methods. The
   correspondence between operator symbols and method names is given.

str.capitalize()

   Return a copy of the string with its first character capitalized
   and the rest lowercased.  For example:

      import sys
      from types import ModuleType

See also:

   **PEP 562** - Module __getattr__ and __dir__
      Describes the "__getattr__" and "__dir__" functions on modules.
"""
    blocks = text_blocks(text)
    assert _shape(blocks) == [
        ("term", 0, "object.__lt__(self, other)"),
        ("term", 0, "object.__le__(self, other)"),
        ("paragraph", 1, 'These are the so-called "rich '),
        ("term", 0, "str.capitalize()"),
        ("paragraph", 1, "Return a copy of the string wi"),
        ("code", 1, "import sys\nfrom types import M"),
        ("term", 0, "See also:"),
        ("term", 1, "**PEP 562** - Module __getattr"),
        ("paragraph", 2, 'Describes the "__getattr__" an'),
    ]


def test_an_example_with_blank_lines_is_one_code_block_with_its_indentation() -> None:
    text = (
        "For example:\n\n   class A:\n       def f(self):\n           pass\n\n"
        "       def g(self):\n           pass\n\n   A().f()\n"
    )
    blocks = text_blocks(text)
    assert isinstance(blocks[1], Code)
    assert blocks[1].text == "class A:\n    def f(self):\n        pass\n\n    def g(self):\n        pass\n\nA().f()"
    assert len(blocks) == 2


def _words(blocks: list[TextBlock]) -> Counter[str]:
    found: Counter[str] = Counter()
    for block in blocks:
        if isinstance(block, Table):
            texts = [cell for row in block.rows for cell in row]
        elif isinstance(block, Item):
            texts = [block.marker, block.text]
        else:
            texts = [block.text]
        for text in texts:
            found.update(re.findall(r"\w+", text))
    return found


@pytest.mark.parametrize("topic", ["typesseq", "compound", "customization", "formatstrings", "operator-summary"])
def test_a_builtin_topic_keeps_every_word_and_loses_its_underlines_and_hard_breaks(topic: str) -> None:
    text = topics[topic]
    blocks = text_blocks(text)
    assert _words(blocks) == Counter(re.findall(r"\w+", text))
    prose = [b for b in blocks if isinstance(b, Paragraph | Item | Term | Heading)]
    assert prose and not any("\n" in b.text for b in prose)
    assert not any(re.search(r"([*=~^-])\1{3,}", b.text) for b in prose)
    assert isinstance(blocks[0], Heading) and blocks[0].level == 1


def test_every_builtin_topic_reads_without_losing_a_word() -> None:
    for topic, text in topics.items():
        assert _words(text_blocks(text)) == Counter(re.findall(r"\w+", text)), topic


def test_empty_and_odd_text() -> None:
    assert text_blocks("") == []
    assert text_blocks("\n\n  \n") == []
    assert text_blocks("```\nunclosed fence") == [Code(kind="code", text="unclosed fence", depth=0)]
    assert text_blocks("----") == []  # a rule alone says nothing
    assert text_blocks("| --- | --- |") == []  # so does a table's separator
    assert text_blocks("word\r\nnext") == [Paragraph(kind="paragraph", text="word next", depth=0)]
    assert isinstance(text_blocks("Title\n=====")[0], Heading)
    assert text_blocks("x" * 300)[0] == Paragraph(kind="paragraph", text="x" * 300, depth=0)
    term = text_blocks("Note:\n\n   A note that is long enough to be prose, and ends.")[0]
    assert term == Term(kind="term", text="Note:", depth=0)
