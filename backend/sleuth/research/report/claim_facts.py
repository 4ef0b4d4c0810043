"""What a sentence asserts beyond its key words, and where a cited passage says otherwise.

Word overlap cannot see a sentence that reuses its source's words to say something else. These
checks compare the claim with the source sentence it was aligned with (the one sharing most of its
words) on what overlap ignores: its numbers (digits, number words, ordinals), its negations, words
that have an opposite ("before"/"after", "true"/"false", "always"/"never"), the order of the two
sides of a comparison, and the names and identifiers it mentions.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from sleuth.core.words import FUNCTION_WORDS, light_stem

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_CARDINALS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split()
    )
}
_CARDINALS |= {"twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000"}
_ORDINALS = {
    w: f"#{i}"
    for i, w in enumerate(
        "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split()
    )
    if i >= 2  # "first" orders more often than it counts ("first, ..."); it is an opposite of "last" below
}
_ORDINAL_DIGITS = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
# "one" is a pronoun as often as a number ("one of", "no one", "using one a second time"): it counts
# only before a word that is not a function word ("one argument"). "second" is also a unit of time.
_NOT_ONE_BEFORE = frozenset("the no any each every which this that".split())
_NOT_SECOND_BEFORE = frozenset("a per one every each half".split())
_NOT_ONE_AFTER = FUNCTION_WORDS | {"another"}
_NUMBER_WORD = re.compile(r"(?<![a-z])(?:" + "|".join([*_CARDINALS, *_ORDINALS, "first"]) + r")(?![a-z])")
_LAST_WORD = re.compile(r"([a-z]+)[^a-z]*$")
_NEXT_WORD = re.compile(r"[^a-z]*([a-z]+)")

# A list marker or section number opening a line ("1.", "2)", "(3)", "4.2.1.") is a position in the
# page, not a fact: left in, a numbered list "1."–"7." would make any small number look supported.
LIST_MARKER = re.compile(r"^\s*(?:\(?\d+(?:\.\d+)*[.)]|[-*+•])\s+", re.M)

_WORD = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*|\d+(?:[.,]\d+)*|[,;:()|]")
_NEGATORS = frozenset("not no never none nothing neither nor without nobody nowhere".split())
# Where a negation's reach ends: the next clause.
_CLAUSE = frozenset(", ; : ( ) | but and or whereas while although though unless because so".split())
_SCOPE = 4  # words after a negator that it governs
_ADVERBS = frozenset("yet still already even ever always also quite".split())

# Words with an opposite: a claim that says one where its source says the other inverts it.
_OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split("|")), frozenset(b.split("|")))
    for a, b in (
        ("before|prior", "after"),
        ("above", "below"),
        ("greater|larger|bigger|higher", "less|smaller|lower|fewer"),
        ("more", "less|fewer"),
        ("most|largest|greatest|highest|biggest", "least|smallest|lowest|fewest"),
        ("maximum|max", "minimum|min"),
        ("first|earliest|leftmost|innermost|outermost", "last|latest|rightmost"),
        ("earlier", "later"),
        ("faster|quicker", "slower"),
        ("easier|simpler", "harder"),
        ("better", "worse"),
        ("precede|precedes|preceded|preceding", "follow|follows|followed"),
        ("left", "right"),
        ("inner|innermost", "outer|outermost"),
        ("true", "false"),
        ("always", "never"),
        ("mutable", "immutable"),
        ("hashable", "unhashable"),
        ("increase|increases|increased|increment|increments", "decrease|decreases|decreased|decrement|decrements"),
        ("ascending", "descending"),
        ("inclusive", "exclusive"),
        ("positive", "negative"),
        ("upper|uppercase", "lower|lowercase"),
        ("synchronous|synchronously", "asynchronous|asynchronously"),
        ("enable|enabled|enables", "disable|disabled|disables"),
        ("explicit|explicitly", "implicit|implicitly"),
        ("shallow", "deep"),
        ("leading", "trailing"),
        ("beginning|start", "end"),
        ("allowed|permitted", "forbidden|prohibited|disallowed"),
        ("success|succeeds", "failure|fails"),
        ("local", "global"),
        ("same", "different"),
        ("ordered", "unordered"),
        ("public", "private"),
        ("strong", "weak"),
        ("static", "dynamic"),
        ("lazy|lazily", "eager|eagerly"),
    )
)
_OPPOSITE: dict[str, frozenset[str]] = {}
for _one, _other in _OPPOSITES:
    for _word in _one:
        _OPPOSITE[_word] = _OPPOSITE.get(_word, frozenset()) | _other
    for _word in _other:
        _OPPOSITE[_word] = _OPPOSITE.get(_word, frozenset()) | _one
# Words that relate two sides: swapping the sides ("A before B" for "B before A") inverts the claim.
_COMPARATORS = frozenset("before after than precede precedes preceded follow follows followed".split())
_NEIGHBOURS = 3  # key words either side that place a word in its sentence
_SIDE = 6  # key words either side of a comparison that name what it compares

# Identifiers and names: dotted (`os.path`), with an underscore (`__slots__`), a call (`len()`),
# CamelCase (`TypeError`), capitals (`GIL`), or a capitalised word inside a sentence ("Unicode").
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|\w*_\w*[A-Za-z0-9]\w*|[A-Za-z_]\w*(?=\(\))"
    r"|[A-Z][a-z0-9]+[A-Z]\w*|[a-z]+[A-Z]\w*|[A-Z]{2,}[A-Z0-9]*s?)(?![\w])"
)
_NAME = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-z]{2,}\b")
_QUOTED = re.compile(r"[\"“]([^\"“”\s][^\"“”]{0,30}?)[\"”]")
# Words capitalised for reasons other than being a name.
_NOT_NAMES = frozenset("True False I".split())


def normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')


def _expand(text: str) -> str:
    """Lower case with negations written out: "can't", "cannot", "doesn't" -> "... not"."""
    # Python's None is a name, not a negation; a call's parentheses do not end a clause.
    text = re.sub(r"\bNone\b", "none_", normal(text)).lower().replace("()", "")
    text = re.sub(r"\bcan'?t\b|\bcannot\b", "can not", text)
    text = re.sub(r"\bwon'?t\b", "will not", text)
    return re.sub(r"(\w)n't\b", r"\1 not", text)


def tokens(text: str) -> list[str]:
    """Words and clause punctuation, lower case, with negations written out."""
    return _WORD.findall(_expand(text))


def is_key(token: str) -> bool:
    return token not in FUNCTION_WORDS and token not in _NEGATORS and (len(token) > 1 or token.isdigit())


def numbers(text: str, *, first: bool = False) -> set[str]:
    """Every number `text` states: digits, number words ("four" is 4) and ordinals ("third" is #3);
    with `first`, "first" too (#1), which otherwise orders more often than it counts."""
    text = normal(text)
    found = {n.replace(",", "") for n in _NUMBER.findall(text)}
    found |= {f"#{n}" for n in _ORDINAL_DIGITS.findall(text)}
    lower = text.lower()
    for match in _NUMBER_WORD.finditer(lower):
        word = match.group(0)
        before = _LAST_WORD.search(lower, max(0, match.start() - 40), match.start())
        after = _NEXT_WORD.match(lower, match.end(), match.end() + 40)
        previous, following = (before.group(1) if before else ""), (after.group(1) if after else "")
        if word == "one" and (previous in _NOT_ONE_BEFORE or not following or following in _NOT_ONE_AFTER):
            continue
        if word == "second" and (previous in _NOT_SECOND_BEFORE or previous in _CARDINALS):
            continue
        if word in _CARDINALS:
            found.add(_CARDINALS[word])
        elif word in _ORDINALS:
            found.add(_ORDINALS[word])
        elif first:
            found.add("#1")
    return found


def shown_number(number: str) -> str:
    """A number as `numbers` found it, for a reader: "#3" is "3rd"."""
    if not number.startswith("#"):
        return number
    n = number[1:]
    return n + ({"1": "st", "2": "nd", "3": "rd"}.get(n[-1], "th") if not n.endswith(("11", "12", "13")) else "th")


@dataclass(frozen=True)
class Site:
    """One negator and the key words of its clause around it."""

    words: frozenset[str]
    head: str  # the first word it negates that is not an adverb ("not yet completed": "completed")


@dataclass(frozen=True)
class Negation:
    sites: tuple[Site, ...]
    governed: frozenset[str]  # key words a negator governs

    @property
    def count(self) -> int:
        return len(self.sites)


def _root(token: str) -> str:
    """A stem with a final "e" folded, so that "remove" and "removes" meet."""
    word = light_stem(token)
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _clause_words(span: list[str]) -> list[str]:
    out: list[str] = []
    for t in span:
        if t in _CLAUSE:
            break
        if is_key(t):
            out.append(_root(t))
    return out


def negation(toks: list[str]) -> Negation:
    sites: list[Site] = []
    governed: set[str] = set()
    for i, token in enumerate(toks):
        # "X, not Y" contrasts two things as "X rather than Y" does; it denies neither statement.
        if token not in _NEGATORS or (token == "not" and i and toks[i - 1] == ","):
            continue
        after = _clause_words(toks[i + 1 : i + 1 + _SCOPE])
        before = _clause_words(list(reversed(toks[max(0, i - _SCOPE) : i])))
        head = next((w for w in after if not w.endswith("ly") and w not in _ADVERBS), "")
        governed.update(after)
        sites.append(Site(frozenset(after + before), head))
    return Negation(sites=tuple(sites), governed=frozenset(governed))


def _same_statement(site: Site, other_words: set[str], other: Negation) -> bool:
    """Whether the other sentence says, without negating it, what this negation is about: the word
    it negates and at least one more of its clause."""
    shared = site.words & other_words
    return len(shared) >= 2 and bool(shared - other.governed) and (not site.head or site.head in other_words)


def flipped_negation(claim: list[str], source: list[str]) -> str:
    """Non-empty when the claim negates what its aligned source sentence affirms, or the reverse, or
    moves the negation to another part ("copies objects rather than creating bindings" for "does not
    copy objects, it creates bindings")."""
    said, found = negation(claim), negation(source)
    claim_words = {_root(t) for t in claim if is_key(t)}
    source_words = {_root(t) for t in source if is_key(t)}
    if said.count % 2 == found.count % 2:
        moved = said.governed and found.governed and not said.governed & found.governed
        if moved and said.governed & source_words - found.governed and found.governed & claim_words - said.governed:
            return "the cited passage negates another part of this than the sentence does"
        return ""
    if any(_same_statement(site, source_words, found) for site in said.sites):
        return "the cited passage states this without the negation the sentence adds"
    if any(_same_statement(site, claim_words, said) for site in found.sites):
        return "the cited passage negates this (a “not” or “never” the sentence drops)"
    return ""


Context = tuple[frozenset[str], frozenset[str]]


def _neighbours(toks: list[str], index: int, skip: frozenset[str] = frozenset()) -> Context:
    """Key words before and after `toks[index]`, less words with an opposite and those in `skip`."""
    keys_before = [light_stem(t) for t in toks[:index] if is_key(t) and t not in _OPPOSITE and t not in skip]
    keys_after = [light_stem(t) for t in toks[index + 1 :] if is_key(t) and t not in _OPPOSITE and t not in skip]
    return frozenset(keys_before[-_NEIGHBOURS:]), frozenset(keys_after[:_NEIGHBOURS])


def _shared(one: Context, other: Context) -> int:
    """Neighbours two places share on the same side: "A before B" and "B before A" share none."""
    return len(one[0] & other[0]) + len(one[1] & other[1])


def _context_match(claim: list[str], i: int, source: list[str], words: frozenset[str]) -> int:
    """How many neighbours of `claim[i]` the best-placed occurrence of any of `words` in `source` shares."""
    context = _neighbours(claim, i)
    return max((_shared(context, _neighbours(source, j)) for j, t in enumerate(source) if t in words), default=0)


def swapped_opposite(claim: list[str], source: list[str]) -> str:
    """Non-empty when the claim has a word where its source, in the same place, has its opposite."""
    for i, word in enumerate(claim):
        opposites = _OPPOSITE.get(word)
        if not opposites:
            continue
        same = _context_match(claim, i, source, frozenset({word}))
        other = _context_match(claim, i, source, opposites)
        if other < 1 or other <= same:
            continue
        if word in source:
            # Both words are in both sentences: only a swap of their places inverts the claim; a
            # paraphrase that reorders its clauses keeps each word in its own place.
            if other < 2 or any(
                _context_match(claim, j, source, frozenset({t})) > _context_match(claim, j, source, frozenset({word}))
                for j, t in enumerate(claim)
                if t in opposites
            ):
                continue
        opposite = next(t for t in source if t in opposites)
        return f"the cited passage says “{opposite}” where the sentence says “{word}”"
    return ""


def _sides(toks: list[str], index: int) -> tuple[set[str], set[str]]:
    """The key words on each side of `toks[index]` within its clause, less those on both sides."""

    def side(span: list[str], negated_by: int) -> set[str]:
        # A word a negator governs is another word on its side: "a field without a default
        # follows one with a default" swaps the sides of "follows" though both hold "default".
        out: list[str] = []
        for k, t in enumerate(span):
            if t in _CLAUSE:
                break
            if is_key(t):
                near = span[max(0, k - _SCOPE) : k] if negated_by > 0 else span[k + 1 : k + 1 + _SCOPE]
                out.append(("not " if _NEGATORS & set(near) else "") + light_stem(t))
        return set(out[:_SIDE])

    left, right = side(list(reversed(toks[:index])), -1), side(toks[index + 1 :], 1)
    return left - right, right - left


def swapped_sides(claim: list[str], source: list[str]) -> str:
    """Non-empty when a comparison or order ("A before B", "A greater than B") has its sides swapped."""
    for i, word in enumerate(claim):
        if word not in _COMPARATORS:
            continue
        left, right = _sides(claim, i)
        for j, t in enumerate(source):
            if t != word:
                continue
            s_left, s_right = _sides(source, j)
            if left & s_right and right & s_left:
                return f"the cited passage has the two sides of “{word}” the other way round"
    return ""


def entities(sentence: str) -> set[str]:
    """Identifiers, quoted terms and names the sentence mentions, in the form `mentions` looks for."""
    text = normal(sentence)
    found = {m.group(0) for m in _IDENTIFIER.finditer(text)}
    found |= {m.group(1).strip() for m in _QUOTED.finditer(text)}
    found |= {m.group(0) for m in _NAME.finditer(text) if m.group(0) not in _NOT_NAMES}
    found = {e.lower().rstrip("()").strip(".") for e in found}
    # "e.g" is no name, nor "a.write" in "(a .write()-supporting object)" as a page's text may join it
    return {e for e in found if len(e.strip("_.")) > 1 and min(len(part) for part in e.split(".")) > 1}


def mention_text(text: str) -> str:
    """`text` as `mentions` reads it: lower case, a qualified name whole ("Logger. __init__()" as a
    page's text may space it is "logger.__init__()")."""
    return re.sub(r"(?<=\w)\s*\.\s+(?=_)|(?<=\w)\s+\.(?=\w)", ".", normal(text).lower())


def _word_char(text: str, index: int) -> bool:
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] == "_")


def mentions(text: str, entity: str) -> bool:
    """Whether lower-cased `text` mentions `entity` as a whole word (qualified, plural or called)."""
    at = text.find(entity)
    while at != -1:
        end = at + len(entity)
        ends = [
            end,
            *([end + 1] if text.startswith("s", end) else []),
            *([end + 2] if text.startswith("es", end) else []),
        ]
        if not _word_char(text, at - 1) and any(not _word_char(text, e) for e in ends):
            return True
        at = text.find(entity, at + 1)
    return False


def swapped_names(claim: list[str], source: list[str], names: set[str]) -> str:
    """Non-empty when two names that the claim and its source both give have traded places ("A, unlike
    B" for "B, unlike A"): each stands, in the claim, where the source has the other."""
    present = sorted(n for n in names if n in claim and n in source)
    skip = frozenset(present)

    def contexts(toks: list[str], name: str) -> list[Context]:
        return [_neighbours(toks, i, skip) for i, t in enumerate(toks) if t == name]

    def match(said: list[Context], found: list[Context]) -> int:
        return max((_shared(a, b) for a in said for b in found), default=0)

    for k, one in enumerate(present):
        for other in present[k + 1 :]:
            mine, theirs = contexts(claim, one), contexts(claim, other)
            its, their = contexts(source, one), contexts(source, other)
            if match(mine, their) > match(mine, its) and match(theirs, its) > match(theirs, their):
                return f"the cited passage has {one} and {other} the other way round"
    return ""
