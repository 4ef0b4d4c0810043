"""Text helpers for the offline extractive model: terms, sentences, numbered blocks, citations.

Everything here is pure string processing so each step stays deterministic and testable.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from sleuth.core.words import FUNCTION_WORDS, QUESTION_WORDS, stem

# Function words and question scaffolding: they say nothing about the subject of a question.
STOPWORDS: frozenset[str] = FUNCTION_WORDS | QUESTION_WORDS

# Words that make a request vague when they stand in for the subject ("tell me stuff").
VAGUE_WORDS: frozenset[str] = frozenset(
    "stuff things thing something anything everything whatever info information topic topics "
    "general overview basics misc random interesting cool".split()
)

# Verbs that signal a relation between the subjects; they shape the plan, not the subject.
RELATION_WORDS: frozenset[str] = frozenset(
    "interact interacts interaction interactions relate relates related relation relationship "
    "affect affects influence influences combine combines differ differs connect connects "
    "depend depends compare compares versus".split()
)

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[./-][A-Za-z0-9_]+)*")
_KEYWORD_NOUNS = frozenset(
    "statement statements loop loops clause clauses keyword keywords block blocks expression expressions".split()
)
_CITATION_GROUP = re.compile(r"(?<![\w)\]`])(?:\s*\[\d+\])+")  # not "heap[0]": an index, not a marker


def tokens(text: str) -> list[str]:
    """Word-like tokens, keeping identifiers such as `__getattr__` and `asyncio.gather` whole."""
    return _TOKEN.findall(text)


def content_words(text: str) -> list[str]:
    """Subject-bearing words in order of appearance (original spelling, de-duplicated)."""
    seen: set[str] = set()
    words: list[str] = []
    for token in tokens(text):
        low = token.lower()
        if low in STOPWORDS or low in VAGUE_WORDS or (len(low) < 2 and not low.isdigit()):
            continue
        key = stem(low)
        if key not in seen:
            seen.add(key)
            words.append(token)
    return words


def term_set(text: str) -> set[str]:
    """Stemmed content terms, for overlap scoring. A dotted name also counts as its parts, so
    `functools.lru_cache` meets a page titled "functools" and a sentence about "lru_cache"; a
    snake_case name counts its words too, so the entry `secrets.token_hex` is about "tokens"; and
    "try/finally" is about "try" and "finally"."""
    found: set[str] = set()
    for word in content_words(text):
        found.add(stem(word))
        parts = re.split(r"[./]", word) if re.search(r"[./]", word.strip("./")) else []
        if "_" in word.strip("_"):
            parts += [piece for part in (parts or [word]) for piece in part.strip("_").split("_")]
        found.update(stem(part) for part in parts if len(part) > 1 and part.lower() not in STOPWORDS)
    return found


def rarity(term_sets: list[set[str]], wanted: set[str]) -> dict[str, float]:
    """Per wanted term, 1 / (1 + 4 * share of the texts containing it): a word on nearly every
    line of the sources (say "attribute" in pages about attributes) tells texts apart less."""
    total = max(1, len(term_sets))
    return {term: 1.0 / (1.0 + 4.0 * sum(term in terms for terms in term_sets) / total) for term in wanted}


def chunks(text: str) -> list[str]:
    """Runs of consecutive content words: a cheap stand-in for noun phrases.

    "How do Python descriptors and __getattr__ interact during attribute lookup?" gives
    ["Python descriptors", "__getattr__", "interact", "attribute lookup"].
    """
    runs: list[list[str]] = [[]]
    pieces = re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:[./-][A-Za-z0-9_]+)*|[^\sA-Za-z_]", text)
    for position, piece in enumerate(pieces):
        low = piece.lower()
        is_word = bool(_TOKEN.fullmatch(piece))
        following = pieces[position + 1].lower() if position + 1 < len(pieces) else ""
        # "with statement", "for loop": a keyword named by the next word is part of the subject
        keyword = low in STOPWORDS and following in _KEYWORD_NOUNS
        if low in RELATION_WORDS:
            # a relation verb is its own chunk: it joins subjects rather than belonging to one
            runs.extend([[piece], []])
        elif is_word and (keyword or (low not in STOPWORDS and low not in VAGUE_WORDS and len(low) > 1)):
            runs[-1].append(piece)
        elif runs[-1]:
            runs.append([])
    seen: set[str] = set()
    phrases: list[str] = []
    for run in runs:
        if not run:
            continue
        phrase = " ".join(run[:4])  # long runs are usually lists, not one phrase
        if phrase.lower() not in seen:
            seen.add(phrase.lower())
            phrases.append(phrase)
    return phrases


def overlap(a: set[str], b: set[str]) -> float:
    """Share of `b`'s terms found in `a` (0..1)."""
    return len(a & b) / len(b) if b else 0.0


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def normalise_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def join_phrases(items: list[str], conjunction: str = "and") -> str:
    """["a"] -> "a"; ["a", "b"] -> "a and b"; ["a", "b", "c"] -> "a, b and c"."""
    items = [item for item in items if item]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


# ---- sentences ---------------------------------------------------------------------------

MAX_PARENTHESIS_SENTENCES = 3
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "Mr.", "Dr.", "No.", "approx.", "Fig.")
# A quote or bracket closed after the full stop ("(This is intended.)") ends its sentence with it.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(`*]?[A-Z0-9_])")
# Sentences that only make sense next to something the reader cannot see.
_DANGLING_START = re.compile(
    r"^(?:It|Its|They|Them|Such|Here|There|Also|However|But|And|Or|So|Thus|"
    r"Hence|Then|Otherwise|Likewise|Similarly|See|Like|Called|Example|For example|In this case)\b"
)
# "This" alone points back ("This is why..."); "This module provides..." names what it is about,
# unless the noun is one that only points back ("This behaviour", "These cases").
_DEMONSTRATIVE = re.compile(r"^(?:This|That|These|Those)\b(?P<next>\s+[\w-]+)?")
_POINTING_NOUNS = frozenset(
    "is was are were means meant can could will would may might has have had does do did should must also "
    "allows makes ensures includes way ways approach approaches case cases behaviour behavior example examples "
    "one ones step steps method methods feature features value values".split()
)
_CODE_HINT = re.compile(
    r"(>>>|\.\.\.\s|^\s*(def|class|return|import|from|if|for|while|print)\b|[{}]\s*$|^\S*;\s*$|==|!=|\+=|->"
    # a block that opens ("with ExitStack() as stack:"), an indented comment, an assignment ("files = [")
    r"|^\s*(with|try|except|finally|elif|else|async)\b.*:\s*$|^\s+#\s|^\s*[A-Za-z_][\w.]*\s*=\s*[^=\s])"
)
# A statement's end (";") or an open bracket ends a line of code, not of prose: "CREATE TABLE t(x);",
# "CREATE TABLE phonebook2(". Prose ends its line with a sentence, and a list item is no code.
_CODE_LINE_END = re.compile(r"(?:;|[(\[{])\s*$")
_INDENTED = re.compile(r"^(?: {2,}|\t)\S")
_PROSE_LINE_END = re.compile(r"[.!?:][\"')\]]?\s*$")
_STATEMENT_START = re.compile(r"^\s*[A-Z]{3,}\s+[^A-Z\s]")  # a keyword, then no capitalised word: "SELECT x, y"


_PROSE_MARKUP = frozenset('"*`')


def _code_line(line: str) -> bool:
    if _CODE_HINT.search(line):
        return True
    return not _LIST_ITEM.match(line.strip()) and bool(_CODE_LINE_END.search(line))


def _looks_like_code(paragraph: str) -> bool:
    lines = [line for line in paragraph.splitlines() if line.strip()]
    if not lines:
        return True
    # An indented line continues a statement ("CREATE TABLE t(" then "  name TEXT,") only below a line
    # of code: below prose it is a hard-wrapped list item's or paragraph's next line.
    continued = _code_line(lines[0])
    item = bool(_LIST_ITEM.match(lines[0]))
    ends_as_sentence = bool(_PROSE_LINE_END.search(lines[-1]))
    if len(lines) > 1 and item and not continued and ends_as_sentence:
        return False  # a list item wrapped over lines that ends as a sentence ('…\n   from "__enter__()" is …')
    if (
        len(lines) > 1
        and _STATEMENT_START.match(lines[0])
        and _CODE_LINE_END.search(lines[-1])
        and not any(_PROSE_LINE_END.search(line) for line in lines)
    ):
        return True  # a statement broken over lines ("SELECT x" / "FROM t" / "ORDER BY x;")
    code_lines = sum(1 for line in lines if _code_line(line) or (continued and bool(_INDENTED.match(line))))
    letters = sum(ch.isalpha() or ch.isspace() for ch in paragraph)
    # quotes and emphasis around names are a sentence's markup ('3. "remove()" raises "ValueError"
    # when *x* is not found in *s*.'), in a list item or a line that ends as a sentence does
    markup = sum(ch in _PROSE_MARKUP for ch in paragraph) if (item or len(lines) == 1) and ends_as_sentence else 0
    return code_lines * 2 >= len(lines) or letters < 0.8 * (len(paragraph) - markup)


def _is_heading(paragraph: str) -> bool:
    lines = paragraph.strip().splitlines()
    if len(lines) == 2 and re.fullmatch(r"[*=\-~^#]{3,}", lines[1].strip()):
        return True
    single = paragraph.strip()
    # "For example:" closes many a one-line paragraph of prose; a title has no sentence in it
    return len(lines) == 1 and (single.startswith("#") or not re.search(r"[.!?:;]$|[.!?] ", single))


ELISION = "[…]"  # where an excerpt of a page leaves text out
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def table_rows(block: str) -> list[str]:
    """A markdown table's body rows as statements ("| "error" | turn … |" -> '"error": turn ….'), or
    [] when `block` is not a table. Reference pages put whole lists of options in tables (a row
    says what one value does); read as prose the rows are one run-on line nothing can quote."""
    lines = [line.strip() for line in block.strip().splitlines()]
    if len(lines) < 3 or not all(line.startswith("|") for line in lines) or not _TABLE_SEPARATOR.match(lines[1]):
        return []
    rows: list[str] = []
    for line in lines[2:]:
        cells = [normalise_space(cell) for cell in line.strip("|").split("|")]
        cells = [cell for cell in cells if cell]
        if len(cells) >= 2:
            rows.append(f"{cells[0]}: {'; '.join(cells[1:]).rstrip('.')}.")
    return rows


_LIST_ITEM = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+(?=\S)")
# A sentence that leans on what follows it ("as follows:", "for example:", "the following
# functions:") says nothing once that is dropped.
_LIST_AHEAD = "following|as follows|below"  # what announces a list, not just an example
_POINTS_AHEAD = re.compile(
    rf"\b(?:{_LIST_AHEAD}|for example|for instance|such as|like this|like so|here)\b|\be\.g\.", re.I
)
_ANNOUNCES_LIST = re.compile(rf"\b(?:{_LIST_AHEAD})\b", re.I)


def announces_list(sentence: str) -> bool:
    """Whether a sentence announces what follows it ("as follows:", "the precautions enumerated
    below.")."""
    return sentence.endswith(":") or bool(_ANNOUNCES_LIST.search(sentence))


# A code example short enough to quote beside the paragraph it illustrates.
EXAMPLE_LINES = 12
EXAMPLE_CHARS = 600
EXAMPLE_LINE_CHARS = 160  # a longer line is a paragraph of prose that merely quotes code


@dataclass
class PageParagraph:
    """A prose paragraph of a page, with the heading above it and the code example right after it."""

    heading: str
    text: str
    example: str = ""  # "" when no short code block follows it directly
    # The page's own section heading above it: the heading itself, or, under a defined term, a list
    # item's label or the sentence that introduces a list, the section those stand in.
    section: str = ""
    item: bool = False  # a list item's text, without its marker
    # a list item right after a paragraph or an item, nothing (a heading, code, a table) between
    continues: bool = False
    labelled: bool = False  # a list item whose label sentence became its heading


def _example(block: str) -> str:
    code = textwrap.dedent(block.strip("\n")).rstrip()
    lines = code.splitlines()
    if len(lines) > EXAMPLE_LINES or len(code) > EXAMPLE_CHARS or "```" in code:
        return ""  # a whole program or a long listing is no example to quote
    if any(len(line) > EXAMPLE_LINE_CHARS for line in lines):
        return ""
    return code


MIN_NAME_LIST = 3  # one-line items in a row that are a list of names, not terms each defined below


def page_paragraphs(text: str) -> list[PageParagraph]:
    """The prose paragraphs of a page, in order, each with its heading and following example.

    A heading is any short line that is not a sentence: a title, or in reference manuals the
    signature an entry describes ("@functools.lru_cache(maxsize=128)"). Code blocks are not prose:
    a short one right after a paragraph is that paragraph's example (the statement a paragraph on
    `ON CONFLICT` describes; most reference pages show the syntax only there). Each row of a table
    is a paragraph of its own. A list item is prose without its marker, and the sentence that
    introduces its list ("Advantages include:") stands above it as its heading: "WAL is
    significantly faster" answers a question on the advantages of write-ahead logging only under
    that sentence."""
    out: list[PageParagraph] = []
    heading = ""
    intro = ""  # the sentence ending in ":" that opened the list being read
    after_prose = False  # the last block was a prose paragraph: a code block now illustrates it
    names = 0  # one-line items read in a row: terms, or a list of bare names
    above = ""  # the heading before them
    section = ""
    for block in re.split(r"\n\s*\n", text):
        if not block.strip():
            continue
        if block.strip() == ELISION:
            heading = intro = section = ""  # text was left out here: the heading above may not cover what follows
            after_prose = False
            names = 0
            continue
        rows = table_rows(block)
        if rows:
            out.extend(PageParagraph(heading, row, section=section) for row in rows)
            after_prose = False
            names = 0
            continue
        if _is_heading(block):
            found = normalise_space(block.lstrip("#"))
            term = is_term_heading(found)
            if term and not names:
                above = heading
            names = names + 1 if term else 0
            # A defined term (or an entry's two signatures) heads what follows it; a list of names
            # ("- SQLITE_IOCAP_ATOMIC", "- SQLITE_IOCAP_ATOMIC512", …) does not: its last name is
            # just the last item, and the paragraph after it is about them all.
            heading = above if names >= MIN_NAME_LIST else found
            if not term:
                section = found
            intro = ""
            after_prose = False
            continue
        names = 0
        if _looks_like_code(block):
            if out and intro and out[-1].text.endswith(intro) and not _POINTS_AHEAD.search(intro):
                # "..., the saved exception is discarded:" before its example still states a whole
                # fact: without the code, it ends as the statement it is
                out[-1].text = out[-1].text[:-1].rstrip() + "."
            if after_prose:
                out[-1].example = _example(block)
            intro = ""
            after_prose = False
            continue
        paragraph = normalise_space(block)
        item = _LIST_ITEM.match(paragraph)
        continues = bool(item) and after_prose
        after_prose = True
        body = paragraph[item.end() :] if item else paragraph
        label = _item_label(body) if item else ""
        if label:
            out.append(
                PageParagraph(
                    f"- {label}",
                    body.split(None, len(label.split()))[-1],
                    section=section,
                    item=True,
                    continues=continues,
                    labelled=True,
                )
            )
            continue
        if item and intro:
            out.append(PageParagraph(intro, body, section=section, item=True, continues=continues))
            continue
        out.append(PageParagraph(heading, body, section=section, item=bool(item), continues=continues))
        intro = split_sentences(paragraph)[-1] if paragraph.endswith(":") else ""
    return out


MAX_ITEM_LABEL_WORDS = 3


def _item_label(item: str) -> str:
    """The label a list item opens with ("Atomic Transactions. Writes to … are atomic."): a sentence of
    at most three words before the item's own sentences. It says what they are about, as a defined
    term does, so it becomes their heading; "" when the item has none."""
    sentences = split_sentences(item)
    first = sentences[0] if len(sentences) > 1 else ""
    if not first.endswith(".") or len(first.split()) > MAX_ITEM_LABEL_WORDS or not first[:1].isupper():
        return ""
    return first[:-1]


def sectioned_paragraphs(text: str) -> list[tuple[str, str]]:
    """(nearest heading above, paragraph) for the prose paragraphs of a page, in order."""
    return [(paragraph.heading, paragraph.text) for paragraph in page_paragraphs(text)]


def paragraphs(text: str) -> list[str]:
    """Prose paragraphs of a page: blank-line separated, headings and code blocks dropped."""
    return [paragraph for _, paragraph in sectioned_paragraphs(text)]


def split_sentences(paragraph: str) -> list[str]:
    """Split one normalised paragraph into sentences without breaking at "e.g." and the like."""
    protected = paragraph
    for index, abbreviation in enumerate(_ABBREVIATIONS):
        protected = protected.replace(abbreviation, f"\x00{index}\x00")
    pieces = [piece.strip() for piece in _SENTENCE_END.split(protected) if piece.strip()]
    sentences: list[str] = []
    index = 0
    while index < len(pieces):
        # A parenthesis that spans sentences ("(Note that ... a string. It has no bearing ...)") is
        # one unit: its first sentence alone leaves it open.
        closing = range(2, min(MAX_PARENTHESIS_SENTENCES, len(pieces) - index) + 1)
        taken = 1
        if _unclosed(pieces[index]) > 0:
            taken = next((more for more in closing if _unclosed(" ".join(pieces[index : index + more])) <= 0), 1)
        piece = " ".join(pieces[index : index + taken])
        for number, abbreviation in enumerate(_ABBREVIATIONS):
            piece = piece.replace(f"\x00{number}\x00", abbreviation)
        sentences.append(piece)
        index += taken
    return sentences


def _unclosed(text: str) -> int:
    return text.count("(") - text.count(")")


def is_fact_sentence(sentence: str) -> bool:
    """A sentence that can stand alone as a cited fact: prose, complete, not too short or long."""
    if not 25 <= len(sentence) <= 420:
        return False
    words = tokens(sentence)
    # a statement that introduces an example or closes a list item ("...; ") is still a statement
    if not re.search(r"[.!?;][\"')\]]?$", sentence) and not (sentence.endswith(":") and len(words) >= 10):
        return False
    if not re.match(r"[\"'(`*]?[A-Za-z0-9_]", sentence):  # lower case: a paragraph opening on a name
        return False
    if _unclosed(sentence) > 0:
        return False  # a parenthesis the page closes in a later sentence, or never: a broken unit
    first = re.match(r"([a-z]+)\s", sentence)
    if first and first.group(1) in FUNCTION_WORDS:
        return False  # the tail of a sentence the page broke ("is not a WITHOUT ROWID table."), not a name
    if re.match(r"(?:Changed|New|Deprecated) in version", sentence):
        return False
    if any(mark in sentence for mark in ("…", "«", "»", "...")):
        return False  # search-snippet fragments and highlight markers are not the document's text
    # never re-cite someone's markers; an index into a name ("heap[0]", "argv[1]") is code, not a marker
    return len(words) >= 5 and not re.search(r"(?<![\w\])])\[\d+\]", sentence)


# An entry's kind may precede its name: "class", "exception", "coroutine", "async", "abstractmethod".
_SIGNATURE = re.compile(
    r"^(?:@|(?:(?:class|exception|async|coroutine|awaitable|abstractmethod|classmethod|staticmethod) )+)?"
    r"\s*([A-Za-z_][\w.]*)\s*\(.*\)\s*(?:->.*)?¶?$"
)


def is_term_heading(heading: str) -> bool:
    """A defined term or documented entry as a heading: a one-line list item ("- spawn", "-
    secrets.token_hex([nbytes=None])"), as extracted definition lists and API references give."""
    return heading.startswith("- ") and len(heading.split()) <= 8


def defined_term(heading: str) -> str:
    """The term a short definition-list heading defines ("- spawn" -> "spawn", "-
    @functools.singledispatch" -> "singledispatch"); "" for anything else, signatures included
    (see `entry_name`)."""
    if not is_term_heading(heading) or "(" in heading:
        return ""
    term = re.sub(r"^(?:@|class |exception |async |abstractmethod )+", "", heading[2:].strip().rstrip("¶").strip())
    if re.fullmatch(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+", term):
        return term.rsplit(".", 1)[-1]  # a dotted name: the part that tells entries apart
    return term if 0 < len(term.split()) <= 3 else ""


def entry_name(heading: str) -> str:
    """The name a reference entry documents, when its heading is a signature ("secrets.token_hex(
    [nbytes=None])¶" -> "secrets.token_hex"); "" for an ordinary title."""
    match = _SIGNATURE.match(heading.strip().removeprefix("- "))  # a definition list's item mark
    return match.group(1) if match else ""


def without_highlights(snippet: str) -> str:
    """A search snippet's text without its match markers («lru»_«cache» -> lru_cache) and ellipses."""
    return re.sub(r"[«»…]", "", snippet)


_PROSE_END = re.compile(r"[.!?:][\"')\]]?$")
NAVIGATION_PROSE_SHARE = 0.2


def is_navigation_page(text: str) -> bool:
    """Tables of contents, indexes and menus: mostly titles and names, little prose.

    Judged by structure, not wording: the share of the page's characters in paragraphs that
    read as prose (eight words or more, ending like a sentence; hard-wrapped lines are joined
    first). Reference pages score well above 0.3; the chapter and index pages of a Sphinx or
    DocBook manual score below 0.2."""
    blocks = [normalise_space(block) for block in re.split(r"\n\s*\n", text) if block.strip()]
    total = sum(len(block) for block in blocks)
    if total == 0:
        return True
    prose = sum(len(block) for block in blocks if _PROSE_END.search(block) and len(block.split()) >= 8)
    return prose / total < NAVIGATION_PROSE_SHARE


def is_dangling(sentence: str) -> bool:
    demonstrative = _DEMONSTRATIVE.match(sentence)
    if demonstrative:
        following = (demonstrative.group("next") or "").strip().lower()
        return not following or following in _POINTING_NOUNS
    return bool(_DANGLING_START.match(sentence))


def page_sentences(text: str) -> list[str]:
    """Candidate fact sentences of a page, in document order, verbatim up to whitespace."""
    return [sentence for _, sentence in sectioned_sentences(text)]


def sectioned_sentences(text: str) -> list[tuple[str, str]]:
    """(heading, sentence) for every candidate fact sentence of a page, in document order."""
    return [(sentence.heading, sentence.text) for sentence in illustrated_sentences(text)]


@dataclass
class PageSentence:
    """A candidate fact sentence of a page, with where it stands."""

    heading: str
    text: str
    example: str  # the code example after its paragraph ("" when there is none)
    paragraph: int  # the index of its paragraph on the page
    section: str = ""  # the page's section heading above it (see PageParagraph)
    # whether the sentence before it on the page is the candidate before it: quoted together, they
    # are the page's words; with a sentence left out between them (a footnote marker, a fragment)
    # they are not one passage
    follows: bool = False
    # of a list item: the paragraph the list follows ("… the following extra precautions might be
    # justified.")
    list_run: int | None = None
    opens_item: bool = False  # the first sentence of a list item


def illustrated_sentences(text: str) -> list[PageSentence]:
    """Every candidate fact sentence of a page, in document order, with its paragraph's example."""
    found: list[PageSentence] = []
    ends_kept = False  # whether the page's last sentence so far is a candidate
    run = -1  # the paragraph the list being read follows (its own first item after a table or heading)
    for index, paragraph in enumerate(page_paragraphs(text)):
        if not paragraph.item or not paragraph.continues:
            run = index
        kept = False  # whether the previous sentence of this paragraph is a candidate
        for position, sentence in enumerate(split_sentences(paragraph.text)):
            if is_fact_sentence(sentence):
                opens_item = paragraph.item and position == 0
                # a labelled item's label sentence stands between it and the text above
                adjacent = opens_item and paragraph.continues and ends_kept and not paragraph.labelled
                found.append(
                    PageSentence(
                        paragraph.heading,
                        sentence,
                        paragraph.example,
                        index,
                        paragraph.section,
                        follows=kept or adjacent,
                        list_run=run if paragraph.item else None,
                        opens_item=opens_item,
                    )
                )
                kept = True
            else:
                kept = False
        ends_kept = kept
    return found


# ---- numbered blocks in tool results ------------------------------------------------------


@dataclass
class NumberedBlock:
    """One `[n] title / URL: url / body` entry of a search or open_url tool result."""

    number: int
    title: str
    url: str
    body: str
    read_elsewhere: bool = False  # the engine says another agent of the run has opened it


_BLOCK_HEAD = re.compile(r"^\[(\d+)\] ?(.*)\nURL: ?(\S*)[ \t]*$", re.M)
_READ_BY = re.compile(r"\ARead by: [^\n]*\n?")


def numbered_blocks(tool_text: str) -> list[NumberedBlock]:
    """Parse the engine's `search_results`/`open_url_results` format; other text yields nothing."""
    heads = list(_BLOCK_HEAD.finditer(tool_text))
    blocks: list[NumberedBlock] = []
    for position, head in enumerate(heads):
        end = heads[position + 1].start() if position + 1 < len(heads) else len(tool_text)
        body = tool_text[head.end() : end]
        # trailing engine notes ("Could not open: ...", "Search error: ...") are not page text
        body = re.split(r"\n(?:Could not open|Search error): ", body)[0].strip("\n")
        read_by = _READ_BY.match(body)
        if read_by:
            body = body[read_by.end() :]
        blocks.append(
            NumberedBlock(int(head.group(1)), head.group(2).strip(), head.group(3).strip(), body, bool(read_by))
        )
    return blocks


def first_paragraph(block: NumberedBlock) -> NumberedBlock:
    """A search hit's snippet only: text after its first blank line is the engine's, not the source's."""
    snippet = re.split(r"\n\s*\n", block.body, maxsplit=1)[0]
    return NumberedBlock(block.number, block.title, block.url, snippet, block.read_elsewhere)


# ---- cited units in findings ---------------------------------------------------------------


@dataclass
class CitedUnit:
    """A piece of a report that ends in citations: its text and the numbers it cites."""

    text: str  # with its citation markers, as written
    bare: str  # without citation markers
    numbers: list[int]
    code: str = ""  # the code example that follows it in the report, quoted from the same source


def announces_what_was_dropped(unit: CitedUnit) -> bool:
    """A sentence ending in ':' announced a list, code or example the agent could not copy."""
    return unit.bare.rstrip().endswith(":")


FENCE = "```"


def fenced(code: str) -> str:
    return f"{FENCE}\n{code}\n{FENCE}"


def prose_blocks(units: list[CitedUnit], shown: set[str] | None = None) -> list[str]:
    """Markdown blocks for a run of cited units: one paragraph, broken after each unit that carries
    an example, the example fenced below it. `shown` (updated) holds examples already in the report:
    two sentences of one paragraph carry the same example, and a reader needs it once."""
    shown = set() if shown is None else shown
    blocks: list[str] = []
    paragraph: list[str] = []
    for unit in units:
        if announces_what_was_dropped(unit) and (not unit.code or unit.code in shown):
            continue  # "For example:" with its example shown above, or with none, announces nothing here
        paragraph.append(unit.text)
        if unit.code and unit.code not in shown:
            shown.add(unit.code)
            blocks.extend([" ".join(paragraph), fenced(unit.code)])
            paragraph = []
    if paragraph:
        blocks.append(" ".join(paragraph))
    return blocks


def cited_units(report: str) -> list[CitedUnit]:
    """Split a report into units that each end with `[n]` markers (uncited text is dropped).

    Accepts both "Fact. [1]" (this model's style) and "Fact [1]." (common in LLM output). A fenced
    code block right after a unit is that unit's `code`.
    """
    units: list[CitedUnit] = []
    code: list[str] | None = None  # lines of the fenced block being read
    follows_unit = False  # nothing but blank lines since the last unit
    for raw in report.splitlines():
        if raw.strip().startswith(FENCE):
            if code is None:
                code = []
                continue
            if follows_unit and units and not units[-1].code:
                units[-1].code = "\n".join(code).strip("\n")
            code = None
            follows_unit = False
            continue
        if code is not None:
            code.append(raw)
            continue
        line = raw.strip().lstrip("-*• ").strip()
        if not line:
            continue
        follows_unit = False
        if line.startswith("#"):
            continue
        position = 0
        # "heap[0]" indexes a name: a marker never follows a word character directly
        for match in re.finditer(r"(?<![\w)\]`])((?:\s*\[\d+\])+)(\.?)", line):
            segment = line[position : match.end()].strip()
            position = match.end()
            numbers = [int(n) for n in re.findall(r"\[(\d+)\]", match.group(1))]
            bare = normalise_space(_CITATION_GROUP.sub("", segment)).replace(" .", ".")
            if bare and not re.search(r"[.!?:;][\"')\]]?$", bare):
                bare += "."  # "Fact [1]" at the end of a line still reads as a sentence
            if len(bare) >= 20:
                units.append(
                    CitedUnit(text=f"{bare} " + "".join(f"[{n}]" for n in numbers), bare=bare, numbers=numbers)
                )
        follows_unit = bool(units) and not line[position:].strip()
    return units


# pydoc's text quotes code as "obj.__attr__()"; as markdown, "__x__" would turn into bold "x".
_QUOTED_CODE = re.compile(r'"([^"\s]*[_.()\[\]*][^"\s]*)"')
_BARE_DUNDER = re.compile(r"(?<![\w`])(__\w+__(?:\(\))?)(?![\w`])")  # "__init__()" stays one code span


def as_markdown(sentence: str) -> str:
    """A copied sentence with its code (quoted code, bare dunder names) as markdown code spans."""
    parts = _QUOTED_CODE.sub(lambda m: f"`{m.group(1)}`", sentence).split("`")
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        parts[i] = _BARE_DUNDER.sub(r"`\1`", parts[i])
    return "`".join(parts)
