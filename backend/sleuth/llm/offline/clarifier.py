"""The clarifier step: ask numbered questions, or call `generate_plan`.

Clarification rule (also in docs/offline-model.md). Words are split on non-identifier characters;
"content words" are the words left after dropping common function words (how, do, the, ...),
request scaffolding (tell, explain, know, ...) and vague fillers (stuff, things, something,
anything, info, topic, overview, ...). The model asks questions instead of planning when

* the question has fewer than 2 content words ("What is the GIL?", "decorators?"), or
* it contains a vague filler or a "tell me about"-style opener and fewer than 4 content words
  ("tell me stuff about asyncio", "what about python things"), or
* none of its content words is searchable: not a known word, not a name, not even pronounceable
  ("asdkjh qwoeiu zxcmnb lkjqwe poiuyt"); then it asks what the subject is.

It asks at most three questions. It never asks when the conversation already holds an answer
to earlier questions (a user message after an assistant message), nor when the prompt's facts
list earlier questions of the session (a follow-up refers to their reports).
"""

from __future__ import annotations

import re

from sleuth.llm.offline.request import OfflineRequest, Reply
from sleuth.llm.offline.text import VAGUE_WORDS, content_words
from sleuth.llm.offline.vocabulary import has_searchable_content
from sleuth.llm.prompt_facts import ClarifyFacts
from sleuth.llm.prompting import render

MIN_CONTENT_WORDS = 2
MIN_CONTENT_WORDS_WHEN_VAGUE = 4
_VAGUE_OPENER = re.compile(
    r"^\s*(tell me (something )?about|what about|anything (on|about)|info (on|about)|talk about)\b", re.I
)


def is_vague(question: str) -> bool:
    """A vague filler word or a "tell me about"-style opener."""
    return _VAGUE_OPENER.search(question) is not None or any(
        token.lower() in VAGUE_WORDS for token in re.findall(r"[A-Za-z]+", question)
    )


def needs_clarification(question: str) -> bool:
    """The documented rule above, on the question text alone."""
    words = content_words(question)
    return (
        len(words) < MIN_CONTENT_WORDS
        or (is_vague(question) and len(words) < MIN_CONTENT_WORDS_WHEN_VAGUE)
        or not has_searchable_content(question)
    )


def clarify(request: OfflineRequest) -> Reply:
    question = request.last_user
    facts = request.facts(ClarifyFacts)
    has_history = bool(facts and facts.earlier_questions)
    if request.answered_after_assistant() or has_history or not needs_clarification(question):
        return Reply(tool_calls=[("generate_plan", {})])
    topic = " ".join(content_words(question)[:3]) if has_searchable_content(question) else ""
    return Reply(text=render("offline/clarify_questions", topic=topic))
