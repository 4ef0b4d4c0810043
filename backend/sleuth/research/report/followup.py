"""A follow-up question on a finished report: answered from the report and its cited documents, no new research.

The answer keeps the report's citation numbers. A model that finds no answer there calls
`decline_followup`; the engine then says so and offers to research it as a new question.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sleuth.core.clock import DeadlineReached, run_until
from sleuth.core.markdown import cited_numbers, rewrite_citations
from sleuth.llm.gateway import LLMError
from sleuth.llm.prompting import render
from sleuth.llm.tokens import truncate_tokens
from sleuth.llm.types import StreamHandlers
from sleuth.research import tool_schemas as ts
from sleuth.research.state import RunState
from sleuth.research.step import llm_step
from sleuth.stream.documents import Document
from sleuth.stream.packets import CitationInfo, Error, MessageDelta, MessageStart, NumberedSource, SectionEnd
from sleuth.stream.results import Followup

SOURCE_TEXT_TOKENS = 1500
READ_TIMEOUT_S = 20.0


@dataclass
class FollowupAnswer:
    markdown: str
    cited: list[NumberedSource]
    answered: bool


async def _source_texts(state: RunState, sources: list[NumberedSource]) -> dict[int, str]:
    """Each cited document's text, read again through the run's readers; the snippet when that fails."""

    async def read(source: NumberedSource) -> str:
        try:
            page = await run_until(state.clock, state.clock.now() + READ_TIMEOUT_S, state.toolbox.read(source.url))
            return truncate_tokens(page.text, SOURCE_TEXT_TOKENS)
        except (DeadlineReached, Exception):  # an unreadable source still has its snippet
            return source.snippet

    texts = await asyncio.gather(*(read(s) for s in sources))
    return {s.number: text for s, text in zip(sources, texts, strict=True)}


def _keep_known(text: str, numbers: set[int]) -> str:
    return rewrite_citations(text, lambda n: n if n in numbers else None)


async def answer_followup(state: RunState, followup: Followup) -> FollowupAnswer:
    """Stream the answer as message packets; citations outside the report's sources are removed."""
    state.new_turn()
    state.emit(MessageStart(final_documents=[Document(**s.model_dump(exclude={"number"})) for s in followup.sources]))
    texts = await _source_texts(state, followup.sources)
    messages = [
        {"role": "system", "content": render("followup", today=state.today)},
        {
            "role": "user",
            "content": render(
                "followup_user",
                question=state.request.question,
                report_question=followup.question,
                report=followup.markdown,
                sources=[{"source": s, "text": texts.get(s.number, "")} for s in followup.sources],
            ),
        },
    ]
    numbers = {s.number for s in followup.sources}
    streamed: list[str] = []

    def on_text(delta: str) -> None:
        streamed.append(delta)
        state.emit(MessageDelta(content=delta))

    try:
        result = await llm_step(
            state, "report", messages, tools=[ts.decline_followup()], handlers=StreamHandlers(on_text=on_text)
        )
        text, declined = result.content, any(c.resolved_name == ts.DECLINE_FOLLOWUP for c in result.tool_calls)
    except LLMError as exc:
        state.emit(Error(message=f"The model could not answer the follow-up. ({exc})", recoverable=True))
        text, declined = "".join(streamed), True
    answer = _keep_known(text, numbers).strip()
    cited = sorted(set(cited_numbers(answer)))
    answered = bool(answer) and not declined and bool(cited)
    if not answered:
        note = render("responses/followup_not_found", question=state.request.question)
        separator = "\n\n" if answer else ""
        state.emit(MessageDelta(content=separator + note))
        answer = f"{answer}{separator}{note}"
    by_number = {s.number: s for s in followup.sources}
    for n in cited:
        source = by_number[n]
        state.emit(CitationInfo(citation_number=n, document_id=source.id, url=source.url, title=source.title))
    state.emit(SectionEnd())
    return FollowupAnswer(markdown=answer, cited=[by_number[n] for n in cited], answered=answered)
