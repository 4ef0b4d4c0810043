"""A clarification answer read as constraints on the research, never as new topics.

The offline clarifier asks about the aspect, the context (version, system, library) and the
purpose; an answer is split into parts and each part is recognised as one of those. A part
that is none of them names the subject, which matters only when the question had none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PURPOSES: list[tuple[str, re.Pattern[str]]] = [
    ("fixing", re.compile(r"\b(fix|fixing|debug\w*|problem|error|bug|issue|troubleshoot\w*|broken)\b", re.I)),
    ("choosing", re.compile(r"\b(choos\w*|choice|decid\w*|compar\w*|select\w*|evaluat\w*|options?|between)\b", re.I)),
    ("learning", re.compile(r"\b(learn\w*|understand\w*|stud(y|ying)|concepts?|teach\w*|explain\w*|curious)\b", re.I)),
]
_ASPECTS: list[tuple[str, re.Pattern[str]]] = [
    ("internals", re.compile(r"\b(internal\w*|under the hood|how it works|implementation|mechanism)\b", re.I)),
    ("practice", re.compile(r"\b(in practice|practical\w*|usage|how to use|use it|using it|examples?)\b", re.I)),
    ("definition", re.compile(r"\b(what it is|definition|overview|basics)\b", re.I)),
]
# A part naming where the answer applies: a version, or the kind of thing that scopes research.
_SCOPE = re.compile(
    r"\d|\b(version|release|reference|docs|documentation|manual|spec\w*|standard|library|framework|system|"
    r"platform|only|linux|windows|macos|cpython|pypy|python|postgres\w*|server|production|region|country|"
    r"since|before|after|until|beginners?|experts?|audience)\b",
    re.I,
)


@dataclass
class Constraints:
    scope: list[str] = field(default_factory=list)  # "Python 3.12 language reference", "CPython only"
    purpose: str = ""  # learning | fixing | choosing
    aspect: str = ""  # definition | internals | practice
    subject: list[str] = field(default_factory=list)  # parts that name what to research

    def scope_with(self, subject_known: bool) -> list[str]:
        """The parts that limit the research: subject-like parts too, once the question has a subject."""
        return self.scope + (self.subject if subject_known else [])


def _parts(answer: str) -> list[str]:
    """The user's words, one part per line or clause; echoed questions and numbering dropped."""
    parts: list[str] = []
    for line in answer.splitlines():
        line = line.strip()
        if not line or line.endswith("?"):
            continue
        line = re.sub(r"^(?:\d+[.)]\s+|[-*•]\s*|Also:\s*)", "", line)
        parts.extend(p.strip(" .") for p in re.split(r"[;,/]|\s+-\s+", line) if p.strip(" ."))
    return parts


def read_constraints(answer: str) -> Constraints:
    found = Constraints()
    for part in _parts(answer):
        purpose = next((name for name, pattern in _PURPOSES if pattern.search(part)), "")
        aspect = next((name for name, pattern in _ASPECTS if pattern.search(part)), "")
        if purpose and not _SCOPE.search(part):
            found.purpose = found.purpose or purpose
        elif aspect and not _SCOPE.search(part):
            found.aspect = found.aspect or aspect
        elif _SCOPE.search(part):
            found.scope.append(part)
        else:
            found.subject.append(part)
    return found
