"""The offline extractive model, driven through litellm (LLMGateway) with engine-shaped requests."""

from __future__ import annotations

import json
import re
from pydoc_data.topics import topics
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.llm.gateway import LLMGateway
from sleuth.llm.prompting import render
from sleuth.llm.types import LLMResult, StreamHandlers
from sleuth.research import tool_schemas as ts
from sleuth.stream.results import ClarificationExchange

QUESTION = "How do Python descriptors and __getattr__ interact during attribute lookup?"
TODAY = "2025-01-01"


class Recorder:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.tool_deltas: list[tuple[int, str, str]] = []

    def handlers(self) -> StreamHandlers:
        return StreamHandlers(
            on_text=self.text.append, on_tool_delta=lambda i, n, a: self.tool_deltas.append((i, n, a))
        )


async def call(role: Any, messages: list[dict[str, Any]], rec: Recorder | None = None, **kwargs: Any) -> LLMResult:
    gateway = LLMGateway(Settings(model="offline"))
    return await gateway.complete(role, messages, handlers=(rec or Recorder()).handlers(), **kwargs)


def clarify_messages(question: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": render("clarify", today=TODAY, history="", earlier_questions=[])},
        {"role": "user", "content": question},
    ]


def assistant_calls(calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, name, args in calls
        ],
    }


def normalise(text: str) -> str:
    """Whitespace folded; quotes and code-span marks dropped (copied code is shown as `code`)."""
    return re.sub(r"\s+", " ", re.sub(r"[`\"]", "", text))


def copied_from(sentence: str, page: str) -> bool:
    """A sentence copied verbatim, or "`entry()`: sentence" where the entry's name heads it on the page."""
    named = re.match(r"\s*`([\w.]+)\(\)`: (.*)$", sentence)
    if named:
        return named.group(1) in page and normalise(named.group(2).strip()) in page
    return normalise(sentence.strip()) in page


# ---- clarifier ---------------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["tell me stuff about asyncio", "decorators?", "What is the GIL?"])
async def test_vague_question_gets_two_to_four_numbered_questions(question: str) -> None:
    rec = Recorder()
    result = await call("clarifier", clarify_messages(question), rec, tools=[ts.generate_plan()], tool_choice="auto")
    assert not result.tool_calls
    questions = [line for line in result.content.splitlines() if re.match(r"^\d+\. .+\?$", line)]
    assert 2 <= len(questions) <= 4
    assert len(rec.text) > 3 and "".join(rec.text) == result.content  # streamed in small deltas


async def test_clear_question_calls_generate_plan_with_usage() -> None:
    result = await call("clarifier", clarify_messages(QUESTION), tools=[ts.generate_plan()], tool_choice="auto")
    assert [c.resolved_name for c in result.tool_calls] == ["generate_plan"] and result.tool_calls[0].ok
    assert result.content == ""
    assert result.usage is not None and result.usage.input_tokens > 50 and result.usage.cost_usd == 0.0


async def test_answered_clarification_proceeds() -> None:
    messages = clarify_messages("python stuff") + [
        {"role": "assistant", "content": "1. Which aspect?\n2. Which version?"},
        {"role": "user", "content": "Decorators and closures, Python 3.12"},
    ]
    result = await call("clarifier", messages, tools=[ts.generate_plan()], tool_choice="auto")
    assert [c.resolved_name for c in result.tool_calls] == ["generate_plan"]


# ---- planner -------------------------------------------------------------------------------------


def plan_messages(question: str, clarification: Any = None, max_steps: int = 6) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": render("plan", today=TODAY, max_steps=max_steps, history="")},
        {
            "role": "user",
            "content": render(
                "plan_user", question=question, clarification=clarification, max_steps=max_steps, earlier_questions=[]
            ),
        },
    ]


def steps_of(text: str) -> list[str]:
    return [re.sub(r"^\d+\.\s*", "", line) for line in text.splitlines() if re.match(r"^\d+\. ", line)]


async def test_plan_has_three_to_six_steps_from_key_terms() -> None:
    result = await call("planner", plan_messages(QUESTION))
    steps = steps_of(result.content)
    assert 3 <= len(steps) <= 6
    assert all("descriptors" in step or "attribute lookup" in step for step in steps)
    assert (await call("planner", plan_messages(QUESTION, max_steps=3))).content.count("\n") == 2


async def test_plan_uses_clarification_answer() -> None:
    exchange = ClarificationExchange(questions=["Which aspect?"], answer="decorators and closures for caching")
    steps = steps_of((await call("planner", plan_messages("python stuff", exchange))).content)
    assert 3 <= len(steps) <= 6 and "decorators" in steps[0]


async def test_plan_keeps_the_question_phrases_intact_and_grammatical() -> None:
    question = "How does PostgreSQL MVCC handle concurrent transactions and what isolation levels exist?"
    steps = steps_of((await call("planner", plan_messages(question))).content)
    assert steps[:2] == ["How does PostgreSQL MVCC handle concurrent transactions?", "What isolation levels exist?"]
    for step in steps[2:]:  # supporting steps name the subjects exactly as the question wrote them
        assert "PostgreSQL MVCC" in step and "concurrent transactions" in step
        assert "handle" not in step and " exist" not in step  # no verb torn out of the question
    # a possessive stays with its word, so the subject is not split into "Python and s ..."
    question = "How does Python's cyclic garbage collector work with generations?"
    steps = steps_of((await call("planner", plan_messages(question))).content)
    assert all("Python's cyclic garbage collector" in step for step in steps) and " s " not in " ".join(steps)


@pytest.mark.parametrize(
    "question",
    ["¿Cómo interactúan los descriptores de Python y __getattr__?", "Python 的描述符和 __getattr__ 如何交互？"],
)
async def test_a_question_in_another_language_is_planned_in_its_own_words(question: str) -> None:
    # this model writes only English, so it does not rephrase the question into mixed-language steps
    assert steps_of((await call("planner", plan_messages(question))).content) == [question]


async def test_clarification_answer_constrains_the_plan_instead_of_becoming_its_topic() -> None:
    questions = ["Which aspect of decorators?", "Which context?", "What is the answer for?"]
    exchange = ClarificationExchange(questions=questions, answer="Python 3.12 language reference, learning the concept")
    steps = steps_of((await call("planner", plan_messages("decorators?", exchange))).content)
    assert 3 <= len(steps) <= 6
    assert all(step.split(" (")[0].count("decorators") == 1 for step in steps)  # every step is about the subject
    assert all(step.endswith("(Python 3.12 language reference)") for step in steps)  # the scope, as a constraint
    assert not any(word in step.lower() for step in steps for word in ("learning", "concept"))  # the purpose
    assert steps[0].startswith("Definition and purpose")  # ...which orders the steps: learning starts from basics


async def test_a_question_without_searchable_content_is_clarified() -> None:
    result = await call(
        "clarifier",
        clarify_messages("asdkjh qwoeiu zxcmnb lkjqwe poiuyt"),
        tools=[ts.generate_plan()],
        tool_choice="auto",
    )
    assert not result.tool_calls
    questions = [line for line in result.content.splitlines() if re.match(r"^\d+\. .+\?$", line)]
    assert 2 <= len(questions) <= 3 and "subject" in questions[0]
    assert "asdkjh" not in result.content


# ---- orchestrator --------------------------------------------------------------------------------

PLAN = [
    "What Python descriptors and __getattr__ are",
    "How attribute lookup works, step by step",
    "How Python descriptors and __getattr__ interact during attribute lookup",
    "Concrete examples of Python descriptors in use",
    "Pitfalls of __getattr__",
]


def orchestrator_messages(cap: int = 3, cycles: int = 8, think: bool = True) -> list[dict[str, Any]]:
    return [
        {
            "role": "system",
            "content": render(
                "orchestrator",
                today=TODAY,
                plan=PLAN,
                max_parallel=cap,
                think_tool=think,
                max_cycles=cycles,
                strategy="balanced",
                question=QUESTION,
                clarification=None,
            ),
        },
        {"role": "user", "content": render("orchestrator_user", question=QUESTION, clarification=None)},
    ]


def turn_message(cycle: int, cycles: int, covered: set[int], attempts: dict[int, int]) -> dict[str, Any]:
    """What the engine says at the start of each cycle (the test plays the engine's bookkeeping)."""
    uncovered = [n for n in range(1, len(PLAN) + 1) if n not in covered]
    content = render(
        "orchestrator_turn",
        cycle=cycle,
        max_cycles=cycles,
        time_left_s=600.0,
        plan=PLAN,
        uncovered=uncovered,
        attempts=attempts,
        reminder=render("orchestrator_reminder") if cycle == 2 else "",
    )
    return {"role": "user", "content": content}


async def orchestrate(messages: list[dict[str, Any]], think: bool = True) -> LLMResult:
    return await call(
        "orchestrator", messages, tools=ts.orchestrator_tools(think), tool_choice="required", max_tokens=1024
    )


async def test_orchestrator_respects_cap_thinks_alone_between_rounds_and_covers_plan() -> None:
    messages = orchestrator_messages(cap=2)
    covered: set[int] = set()
    attempts: dict[int, int] = {}
    dispatched: list[str] = []
    sequence: list[str] = []
    for cycle in range(1, 9):
        messages.append(turn_message(cycle, 8, covered, attempts))
        result = await orchestrate(messages)
        names = [c.resolved_name for c in result.tool_calls]
        sequence.append(",".join(sorted(set(n or "" for n in names))))
        assert all(c.ok for c in result.tool_calls)
        if names == ["generate_report"]:
            break
        assert names.count("research_agent") <= 2
        assert not ("think_tool" in names and "research_agent" in names)  # never in one turn
        messages.append(result.assistant_message())
        for c in result.tool_calls:
            if c.resolved_name == "research_agent":
                task, step = c.parsed["task"], c.parsed["plan_step"]
                assert QUESTION in task and PLAN[step - 1] in task  # self-contained, and says which step
                dispatched.append(task)
                attempts[step] = attempts.get(step, 0) + 1
                covered.add(step)
                answer = "Descriptors define __get__. [1]"
            else:
                answer = render("responses/think_ack")
            messages.append({"role": "tool", "tool_call_id": c.id, "content": answer})
    assert sequence[-1] == "generate_report"
    assert all(any(step in task for task in dispatched) for step in PLAN)
    assert sequence[:4] == ["research_agent", "think_tool", "research_agent", "think_tool"]


async def test_orchestrator_retries_steps_still_uncovered_and_reports_when_cycles_run_out() -> None:
    messages = orchestrator_messages(cap=3, think=False)
    messages.append(turn_message(1, 8, set(), {}))
    first = await orchestrate(messages, think=False)
    messages.append(first.assistant_message())
    for c in first.tool_calls:
        messages.append({"role": "tool", "tool_call_id": c.id, "content": "Fact. [1]"})
    # the engine ran only the first call (say the others were refused) and step 1 has findings
    messages.append(turn_message(2, 8, {1}, {1: 1}))
    second = await orchestrate(messages, think=False)
    assert [c.parsed["plan_step"] for c in second.tool_calls] == [2, 3, 4]
    # a step whose agents keep coming back empty is given up after two attempts
    messages.append(second.assistant_message())
    messages.append(turn_message(3, 8, {1}, {1: 1, 2: 2, 3: 1, 4: 1}))
    third = await orchestrate(messages, think=False)
    assert 2 not in [c.parsed["plan_step"] for c in third.tool_calls]
    last = orchestrator_messages(cycles=4, think=False) + [turn_message(4, 4, set(), {})]
    assert [c.resolved_name for c in (await orchestrate(last, think=False)).tool_calls] == ["generate_report"]


# ---- research agent -------------------------------------------------------------------------------

TASK = render("offline/agent_task", step=PLAN[2], scope="", question=QUESTION)
PAGES = [
    {
        "number": 1,
        "title": "Customizing attribute access",
        "url": "corpus://python-reference/attribute-access",
        "text": topics["attribute-access"],
    },
    {"number": 2, "title": "Truth Value Testing", "url": "corpus://python-reference/truth", "text": topics["truth"]},
]


def agent_turn(cycle: int, max_cycles: int = 6) -> dict[str, Any]:
    content = render("agent_turn", cycle=cycle, max_cycles=max_cycles, time_left_s=300.0)
    return {"role": "user", "content": content}


def report_prompt(task: str, sources: list[dict[str, Any]], max_tokens: int, forced: bool) -> list[dict[str, Any]]:
    return [
        {
            "role": "system",
            "content": render("intermediate_report", today=TODAY, task=task, max_tokens=max_tokens, forced=forced),
        },
        {"role": "user", "content": render("intermediate_report_user", sources=sources, forced=forced)},
    ]


def server_tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


async def test_agent_calls_the_server_tools_that_fit_its_task_beside_its_search() -> None:
    messages = [
        {
            "role": "system",
            "content": render("agent", today=TODAY, think_tool=True, mcp_tools=True, max_cycles=6, max_items=3),
        },
        {"role": "user", "content": TASK},
        agent_turn(1),
    ]
    text = {"type": "string"}
    tools = ts.agent_tools(True) + [
        server_tool(
            "notes__lookup",
            "[MCP server notes] Notes about a Python topic, such as descriptors.",
            {"topic": text},
            ["topic"],
        ),
        server_tool(
            "notes__search_notes",
            "[MCP server notes] Search the notes on __getattr__.",
            {"query": text, "limit": {"type": "integer"}},
            [],
        ),
        server_tool(
            "notes__by_page", "[MCP server notes] Descriptors notes, one page.", {"page": {"type": "integer"}}, ["page"]
        ),
        server_tool("tracker__issues", "[MCP server tracker] Open issues of the login service.", {"q": text}, ["q"]),
    ]
    first = await call("researcher", messages, tools=tools, tool_choice="auto")
    names = [c.resolved_name for c in first.tool_calls]
    # the search, then the two tools that fit (the one needing a page number is left alone, the
    # tracker does not fit); each text argument gets the first search query
    assert names[0] == "search" and set(names[1:]) == {"notes__lookup", "notes__search_notes"}
    query = first.tool_calls[0].parsed["queries"][0]
    arguments = {c.resolved_name: c.parsed for c in first.tool_calls[1:]}
    assert arguments == {"notes__lookup": {"topic": query}, "notes__search_notes": {"query": query}}
    # called once: the next turn goes on as without them
    messages.append(first.assistant_message())
    for tool_call in first.tool_calls:
        messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": "No results."})
    messages.append(agent_turn(2))
    second = await call("researcher", messages, tools=tools, tool_choice="auto")
    assert not {c.resolved_name for c in second.tool_calls} & {"notes__lookup", "notes__search_notes"}


async def test_agent_searches_then_opens_best_results_then_reports() -> None:
    messages = [
        {
            "role": "system",
            "content": render("agent", today=TODAY, think_tool=True, mcp_tools=False, max_cycles=6, max_items=3),
        },
        {"role": "user", "content": TASK},
        agent_turn(1),
    ]
    tools = ts.agent_tools(True)
    rec = Recorder()
    first = await call("researcher", messages, rec, tools=tools, tool_choice="auto")
    assert [c.resolved_name for c in first.tool_calls] == ["search"]
    queries = first.tool_calls[0].parsed["queries"]
    assert 1 <= len(queries) <= 3 and any("__getattr__" in q or "descriptors" in q for q in queries)
    assert len([d for d in rec.tool_deltas if d[2]]) >= 2  # arguments arrive in several chunks
    messages.append(first.assistant_message())
    results = [
        {
            "number": 1,
            "title": "Truth Value Testing",
            "url": "corpus://python-reference/truth",
            "snippet": "Any object can be tested for truth value.",
        },
        {
            "number": 2,
            "title": "Customizing attribute access",
            "url": "corpus://python-reference/attribute-access",
            "snippet": "object.__getattr__(self, name) Called when the default attribute access fails",
        },
        {
            "number": 3,
            "title": "Invoking Descriptors",
            "url": "corpus://python-reference/descriptors",
            "snippet": "a descriptor is an object attribute with binding behavior",
        },
    ]
    messages.append(
        {
            "role": "tool",
            "tool_call_id": first.tool_calls[0].id,
            "content": render("responses/search_results", documents=results, errors=[])
            + "\n\n"
            + render("agent_nudge"),
        }
    )
    messages.append(agent_turn(2))
    second = await call("researcher", messages, tools=tools, tool_choice="auto")
    assert [c.resolved_name for c in second.tool_calls] == ["open_url"]
    urls = second.tool_calls[0].parsed["urls"]
    assert set(urls[:2]) == {"corpus://python-reference/attribute-access", "corpus://python-reference/descriptors"}
    assert "corpus://python-reference/truth" not in urls
    messages.append(second.assistant_message())
    page = render("responses/open_url_results", pages=[PAGES[0] | {"number": 2}], errors=[])
    messages.append({"role": "tool", "tool_call_id": second.tool_calls[0].id, "content": page})
    messages.append(agent_turn(3))
    third = await call("researcher", messages, tools=tools, tool_choice="auto")
    assert [c.resolved_name for c in third.tool_calls] == ["generate_report"]


async def test_agent_reports_on_its_last_round_whatever_it_has() -> None:
    messages = [
        {
            "role": "system",
            "content": render("agent", today=TODAY, think_tool=False, mcp_tools=False, max_cycles=3, max_items=3),
        },
        {"role": "user", "content": TASK},
        agent_turn(3, max_cycles=3),
    ]
    result = await call("researcher", messages, tools=ts.agent_tools(False), tool_choice="auto")
    assert [c.resolved_name for c in result.tool_calls] == ["generate_report"]


async def test_agent_report_is_verbatim_cited_and_titleless() -> None:
    messages = report_prompt(TASK, PAGES, 400, forced=False)
    result = await call("researcher", messages, max_tokens=400)
    report = result.content
    assert not report.lstrip().startswith("#") and "\n#" not in report
    pages = {page["number"]: normalise(page["text"]) for page in PAGES}
    pairs = re.findall(r"(.+?) \[(\d+)\](?:\s|$)", report)
    assert len(pairs) >= 3
    for sentence, number in pairs:
        assert copied_from(sentence, pages[int(number)])
    assert {int(n) for _, n in pairs} == {1}  # the truth-testing page has nothing on the task
    assert result.usage is not None and result.usage.output_tokens <= 400 * 1.1


async def test_agent_report_without_sources_says_so() -> None:
    result = await call("researcher", report_prompt(TASK, [], 400, forced=True))
    assert result.content and "[" not in result.content


# ---- final report ---------------------------------------------------------------------------------


async def test_final_report_has_summary_sections_citations_and_note() -> None:
    findings = []
    for index, step in enumerate(PLAN[:3]):
        task = render("offline/agent_task", step=step, scope="", question=QUESTION)
        report = (await call("researcher", report_prompt(task, PAGES, 600, forced=False))).content
        findings.append({"task": task, "report": report, "plan_step": index + 1})
    sources = [{"number": p["number"], "title": p["title"], "url": p["url"]} for p in PAGES]
    messages = [
        {"role": "system", "content": render("report", today=TODAY, mode="heavy", min_words=2500, max_words=5000)},
        {
            "role": "user",
            "content": render(
                "report_user",
                question=QUESTION,
                clarification=None,
                mode="heavy",
                plan=PLAN,
                findings=findings,
                sources=sources,
                partial=False,
                min_words=2500,
                max_words=5000,
                max_tokens=8192,
            ),
        },
    ]
    report = (await call("report", messages)).content
    assert not report.startswith("#")
    # the question asks one thing: no heading would name anything but the question itself again
    assert not re.findall(r"^#", report, re.M)
    lead = report.split("\n\n")[0]
    assert "descriptor" in lead.lower() or "__getattr__" in lead  # it opens on what was asked
    assert "extractive" in report.lower()
    page_text = {p["number"]: normalise(p["text"]) for p in PAGES}
    body = report.split("\n---\n")[0]
    cited = 0
    for paragraph in body.split("\n\n"):
        if paragraph.startswith(("## ", "_")):
            continue  # headings and italic notes (gap notes) carry no facts
        for sentence, numbers in re.findall(r"(.+?)((?: ?\[\d+\])+)(?= |$)", paragraph):
            cited += 1
            assert any(copied_from(sentence, page_text[int(n)]) for n in re.findall(r"\d+", numbers)), (
                sentence,
                paragraph,
            )
        assert re.sub(r"(.+?)((?: ?\[\d+\])+)(?= |$)", "", paragraph).strip() == ""  # nothing uncited
    assert cited >= 4


async def test_unexpected_input_gets_a_fallback_not_an_exception() -> None:
    result = await call(
        "orchestrator", [{"role": "user", "content": ""}], tools=ts.orchestrator_tools(False), tool_choice="required"
    )
    assert result.tool_calls and result.tool_calls[0].ok
    garbage = [
        {"role": "system", "content": "??"},
        {"role": "user", "content": "Findings from the research agents:\n### Finding 1: x\n"},
    ]
    text = (await call("report", garbage)).content
    assert text.strip()


async def test_agent_opens_the_next_hits_on_its_task_before_reporting() -> None:
    messages = [
        {
            "role": "system",
            "content": render("agent", today=TODAY, think_tool=True, mcp_tools=False, max_cycles=6, max_items=3),
        },
        {"role": "user", "content": TASK},
        agent_turn(1),
    ]
    tools = ts.agent_tools(True)
    first = await call("researcher", messages, tools=tools, tool_choice="auto")
    messages.append(first.assistant_message())
    titles = ["Descriptor changes", "Descriptor notes", "Descriptor FAQ", "Invoking Descriptors", "Truth Value Testing"]
    results = [
        {
            "number": n,
            "title": title,
            "url": f"corpus://python-reference/page-{n}",
            "snippet": "a descriptor is an object attribute with binding behavior"
            if "Truth" not in title
            else "Any object can be tested for truth value.",
        }
        for n, title in enumerate(titles, 1)
    ]
    messages.append(
        {
            "role": "tool",
            "tool_call_id": first.tool_calls[0].id,
            "content": render("responses/search_results", documents=results, errors=[]),
        }
    )
    messages.append(agent_turn(2))
    second = await call("researcher", messages, tools=tools, tool_choice="auto")
    opened = second.tool_calls[0].parsed["urls"]
    assert len(opened) == 3
    messages.append(second.assistant_message())
    page = render("responses/open_url_results", pages=[PAGES[0] | {"number": 1}], errors=[])
    messages.append({"role": "tool", "tool_call_id": second.tool_calls[0].id, "content": page})
    messages.append(agent_turn(3))
    third = await call("researcher", messages, tools=tools, tool_choice="auto")
    # siblings open the same first three at once: the page on the subject may be the fourth
    assert [c.resolved_name for c in third.tool_calls] == ["open_url"]
    again = third.tool_calls[0].parsed["urls"]
    assert "corpus://python-reference/page-4" in again and not set(again) & set(opened)
    assert "corpus://python-reference/page-5" not in again  # off the task: never worth a read
    messages.append(third.assistant_message())
    messages.append({"role": "tool", "tool_call_id": third.tool_calls[0].id, "content": page})
    messages.append(agent_turn(4))
    fourth = await call("researcher", messages, tools=tools, tool_choice="auto")
    assert [c.resolved_name for c in fourth.tool_calls] == ["generate_report"]
