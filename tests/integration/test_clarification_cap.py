"""A clarifier that writes a million characters: its output is cut like every model output, and
nothing the conversation carries (questions, the answer, earlier reports) grows later prompts past
`history_max_tokens`.

The scripted model ignores `max_tokens`, as a misbehaving provider would.
"""

from __future__ import annotations

from typing import Any

from sleuth.llm.tokens import count_message_tokens, count_tokens
from sleuth.stream.results import ClarificationExchange, PriorReport, ResearchRequest
from sleuth_testkit.engine import run_engine, scripted_settings
from sleuth_testkit.model import Reply, ScriptedLLM
from sleuth_testkit.scenarios import ResearchModel
from support.invariants import check_invariants

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
LINE = "1. Which Python version and which implementation of descriptors do you mean here?\n"
DELTA_CHARS = 4000  # per streamed chunk
HUGE = (LINE * (1_000_001 // len(LINE) + 1))[:1_000_001]
CLARIFICATION_CAP = 200
HISTORY_CAP = 400
# The steps whose prompts show the conversation (agents see only their task).
STEPS = ("planner", "orchestrator", "report")


class Verbose(ResearchModel):
    def clarifier(self, body: dict[str, Any]) -> Reply:
        return Reply(text=HUGE, chunk_size=DELTA_CHARS)


def _settings(llm: ScriptedLLM) -> Any:
    return scripted_settings(llm, clarification_max_tokens=CLARIFICATION_CAP, history_max_tokens=HISTORY_CAP)


def _largest_prompts(llm: ScriptedLLM) -> dict[str, int]:
    return {step: max(count_message_tokens(body["messages"]) for body in llm.requests_for(step)) for step in STEPS}


async def test_a_million_character_clarification_is_cut_and_says_so() -> None:
    assert len(HUGE) == 1_000_001
    with ScriptedLLM(Verbose()) as llm:
        run = await run_engine(_settings(llm), QUESTION)
    check_invariants(run.packets)
    assert run.stop_reason == "clarification"
    (cut,) = [p.obj.detail for p in run.of("degraded") if p.obj.level == "output_cut"]
    assert cut.startswith(f"The clarification was longer than {CLARIFICATION_CAP} tokens")
    streamed = "".join(p.obj.content for p in run.of("message_delta"))
    assert count_tokens(streamed) <= CLARIFICATION_CAP + count_tokens(HUGE[:DELTA_CHARS])  # stops within a delta
    (questions,) = [p.obj.questions for p in run.of("clarification")]
    # what is stored (the result) and sent (the packet) is the cut text, cut at a line
    assert questions == run.result.clarification_questions
    assert count_tokens("\n".join(questions)) <= CLARIFICATION_CAP
    assert all(q == LINE[3:].strip() for q in questions)


async def test_the_answering_run_carries_a_bounded_conversation_into_every_prompt() -> None:
    """However long the stored questions, the answer and the earlier reports, each prompt of the
    next run grows by at most the cap, once in prose and once in its facts block."""
    earlier = [
        PriorReport(question=f"Earlier question {i}? " * 200, markdown="Earlier finding. " * 5000) for i in range(3)
    ]
    with ScriptedLLM(ResearchModel()) as llm:
        baseline = await run_engine(_settings(llm), ResearchRequest(question=QUESTION, clarify=False))
        plain = _largest_prompts(llm)
    with ScriptedLLM(Verbose()) as llm:
        # what a client sends back after a clarifier that was not capped: a million characters
        answering = ResearchRequest(
            question=QUESTION,
            clarification=ClarificationExchange(questions=[HUGE], answer="CPython 3.12, the data model. " * 600),
            history=earlier,
        )
        run = await run_engine(_settings(llm), answering)
        conversing = _largest_prompts(llm)
    check_invariants(run.packets)
    assert baseline.stop_reason == run.stop_reason == "completed"
    for step in STEPS:
        assert conversing[step] - plain[step] <= 2 * HISTORY_CAP + 100, (step, plain[step], conversing[step])
