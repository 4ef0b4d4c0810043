"""A scripted research model: behaves like a sensible LLM at every Sleuth step.

Tests start from `ResearchModel` and override single steps to inject failures.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from sleuth_testkit.model import Call, Reply, classify, tool_names, user_text

_SOURCE = re.compile(r"^\[(\d+)\] (.*)\nURL: (\S+)", re.M)
_SOURCE_LINE = re.compile(r"^\[(\d+)\] .* — \S+$", re.M)  # a numbered source as the report step lists it


def sources_in(text: str) -> list[tuple[int, str, str]]:
    """(number, title, url) of every `[n] title / URL:` block in `text`."""
    return [(int(n), title, url) for n, title, url in _SOURCE.findall(text)]


def assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


def _calls_by_turn(body: dict[str, Any]) -> list[list[str]]:
    return [
        [call["function"]["name"] for call in m.get("tool_calls") or []]
        for m in body["messages"]
        if m["role"] == "assistant"
    ]


def dispatch_turns(body: dict[str, Any]) -> int:
    """Earlier assistant turns that sent research agents."""
    return sum(1 for names in _calls_by_turn(body) if "research_agent" in names)


def last_call_names(body: dict[str, Any]) -> list[str]:
    turns = _calls_by_turn(body)
    return turns[-1] if turns else []


def last_tool_texts(body: dict[str, Any]) -> list[str]:
    """Tool results after the last assistant message."""
    out: list[str] = []
    for message in reversed(body["messages"]):
        if message["role"] == "assistant":
            break
        if message["role"] == "tool":
            out.append(message.get("content") or "")
    return list(reversed(out))


@dataclass
class ResearchModel:
    """Default behaviour of each step; every method returns the scripted Reply."""

    tasks_per_cycle: list[list[str]] = field(
        default_factory=lambda: [
            [
                "descriptor protocol __get__ __set__",
                "__getattr__ fallback attribute lookup",
                "__getattribute__ data descriptors",
            ],
            ["property builtin descriptor", "__slots__ descriptors"],
        ]
    )
    clarify_questions: str | None = None  # text to answer the clarifier with, instead of generate_plan
    use_think: bool = True

    def __call__(self, body: dict[str, Any]) -> Reply:
        step: Callable[[dict[str, Any]], Reply] = getattr(self, classify(body))
        return step(body)

    def clarifier(self, body: dict[str, Any]) -> Reply:
        if self.clarify_questions and "user's answer" not in user_text(body).lower():
            return Reply(text=self.clarify_questions)
        return Reply(tool_calls=[Call("generate_plan", {})])

    def planner(self, body: dict[str, Any]) -> Reply:
        return Reply(text="1. How descriptors work\n2. How __getattr__ is used\n3. How they interact in lookup")

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        dispatched = dispatch_turns(body)
        more = dispatched < len(self.tasks_per_cycle)
        # thinking is a turn of its own, between rounds and before the report (never beside agents)
        if (
            self.use_think
            and "think_tool" in tool_names(body)
            and dispatched
            and last_call_names(body) != ["think_tool"]
        ):
            reasoning = (
                f'Cycle {dispatched}: covering "{len(self.tasks_per_cycle[dispatched])}" tasks.\nNext: dispatch.'
                if more
                else f"All {dispatched} cycles done.\nNext: report."
            )
            return Reply(tool_calls=[Call("think_tool", {"reasoning": reasoning})])
        if more:
            return Reply(tool_calls=[Call("research_agent", {"task": t}) for t in self.tasks_per_cycle[dispatched]])
        return Reply(tool_calls=[Call("generate_report", {})])

    def agent(self, body: dict[str, Any]) -> Reply:
        turn = assistant_turns(body)
        task = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if turn == 0:
            return Reply(tool_calls=[Call("search", {"queries": [task, task.split()[0]]})])
        if turn == 1:
            found = [url for text in last_tool_texts(body) for _, _, url in sources_in(text)]
            return Reply(tool_calls=[Call("open_url", {"urls": found[:2]})])
        return Reply(tool_calls=[Call("generate_report", {})])

    def agent_report(self, body: dict[str, Any]) -> Reply:
        numbers = [n for n, _, _ in sources_in(user_text(body))]
        if not numbers:
            return Reply(text="The sources did not answer this task.")
        sentences = [f"Finding {i} about the task [{n}]." for i, n in enumerate(numbers[:3], 1)]
        return Reply(text=" ".join(sentences))

    def artifact(self, body: dict[str, Any]) -> Reply:
        numbers = [n for n, _, _ in sources_in(user_text(body).replace(" — ", "\nURL: "))]
        findings = [{"text": f"Finding backed by source {n}.", "citations": [n]} for n in numbers[:3]]
        findings.append({"text": "A finding citing a number the report lacks.", "citations": [99]})
        arguments = {
            "title": "Descriptors and __getattr__",
            "summary": "Descriptors take precedence over __getattr__. It runs only when lookup fails [1].",
            "key_findings": findings,
        }
        return Reply(tool_calls=[Call("record_artifact", arguments)])

    def followup(self, body: dict[str, Any]) -> Reply:
        if "capital of France" in user_text(body):
            return Reply(tool_calls=[Call("decline_followup", {})])
        return Reply(text="Data descriptors win over the instance dictionary [1], never [99].")

    def audio_script(self, body: dict[str, Any]) -> Reply:
        name = next(iter(tool_names(body)))
        speakers = 2 if name == "record_dialogue" else 1
        lines = [
            {"speaker": i % speakers, "text": f"Line {i}: descriptors take precedence over getattr [1]."}
            for i in range(6)
        ]
        return Reply(tool_calls=[Call(name, {"lines": lines})])

    def report(self, body: dict[str, Any]) -> Reply:
        numbers = [n for n, _, _ in sources_in(user_text(body).replace(" — ", "\nURL: "))]
        cites = "".join(f"[{n}]" for n in numbers[:2])
        body_lines = "\n".join(f"- Point backed by source [{n}]." for n in numbers)
        return Reply(text=f"Descriptors take precedence over __getattr__ {cites}.\n\n## Details\n\n{body_lines}\n")


@dataclass
class HangingOrchestrator(ResearchModel):
    """Hangs in the orchestrator call after `cycles` answered cycles: the run stays live until cancelled."""

    cycles: int = 0

    def orchestrator(self, body: dict[str, Any]) -> Reply:
        if assistant_turns(body) >= self.cycles:
            return Reply(hang=True)
        return super().orchestrator(body)


@dataclass
class HangingAudioScript(ResearchModel):
    """Researches normally; the audio script request hangs, so an audio job stays pending. `asked` is
    released on each such request, so a test knows the job is in flight."""

    asked: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))

    def audio_script(self, body: dict[str, Any]) -> Reply:
        self.asked.release()
        return Reply(hang=True)


@dataclass
class SixStepModel(ResearchModel):
    """Plans six steps and dispatches one agent per step, three a turn, as the orchestrator is asked to;
    `latency_s` delays every answer like a hosted model."""

    latency_s: float = 0.0

    def __post_init__(self) -> None:
        self.tasks_per_cycle = [
            ["descriptor protocol __get__ __set__", "__getattr__ fallback", "__getattribute__ data descriptors"],
            ["property builtin descriptor", "__slots__ descriptors", "instance dictionary lookup order"],
        ]

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = super().__call__(body)
        reply.delay_s = self.latency_s
        return reply

    def planner(self, body: dict[str, Any]) -> Reply:
        steps = [task for cycle in self.tasks_per_cycle for task in cycle]
        return Reply(text="\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1)))


BENCH_TASKS = [
    "How the descriptor protocol (__get__, __set__) decides attribute lookup",
    "When __getattr__ is called as a fallback, and how __getattribute__ differs",
    "How property, classmethod and __slots__ are built on descriptors",
]
TOKEN_CHARS = 4  # characters per streamed delta: about one token, as a hosted model streams


def _bench_sentences(topic: str, numbers: list[int], count: int) -> str:
    cites = numbers or [1]
    return " ".join(
        f"Point {i} on {topic}: the language reference describes this behaviour in detail, "
        f"including the order in which the interpreter consults each mechanism [{cites[i % len(cites)]}]."
        for i in range(count)
    )


class BenchModel:
    """The benchmarks' research model, one token per delta and usage counted from the prompt.

    For a heavy-mode `sleuth research` with clarification on: clarifier -> plan -> the orchestrator
    dispatches 3 agents -> each agent searches, then searches again, opens a page and asks to report
    in one turn, then writes its intermediate report -> the orchestrator thinks -> asks for the
    report -> the final report, with the report's artifact asked beside it. 16 model calls, 6 searches,
    3 parallel lanes."""

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = self.answer(body)
        reply.chunk_size = TOKEN_CHARS
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body["messages"])
        arguments = sum(len(json.dumps(c.arguments)) for c in reply.tool_calls)
        reply.usage = (max(1, prompt_chars // 4), max(1, (len(reply.text) + arguments) // 4))
        return reply

    def answer(self, body: dict[str, Any]) -> Reply:
        step = classify(body)
        if step == "clarifier":
            return Reply(tool_calls=[Call("generate_plan", {})])
        if step == "planner":
            return Reply(text="\n".join(f"{i}. {task}" for i, task in enumerate(BENCH_TASKS, 1)))
        if step == "orchestrator":
            turns = _calls_by_turn(body)
            if not any("research_agent" in names for names in turns):
                return Reply(
                    tool_calls=[
                        Call("research_agent", {"task": t, "plan_step": i}) for i, t in enumerate(BENCH_TASKS, 1)
                    ]
                )
            if "think_tool" in tool_names(body) and (not turns or turns[-1] != ["think_tool"]):
                reasoning = "All three plan steps are covered by the findings, with sources for each. Next: the report."
                return Reply(tool_calls=[Call("think_tool", {"reasoning": reasoning})])
            return Reply(tool_calls=[Call("generate_report", {})])
        if step == "agent":
            task = next(str(m["content"]) for m in body["messages"] if m["role"] == "user")
            if not assistant_turns(body):
                return Reply(tool_calls=[Call("search", {"queries": [task]})])
            urls = [url for text in last_tool_texts(body) for _, _, url in sources_in(text)][:1]
            calls = [Call("search", {"queries": [" ".join(task.split()[:4])]})]
            if urls:
                calls.append(Call("open_url", {"urls": urls}))
            return Reply(tool_calls=[*calls, Call("generate_report", {})])
        if step == "agent_report":
            numbers = [n for n, _, _ in sources_in(user_text(body))][:3]
            return Reply(text=_bench_sentences("this task", numbers, 6))
        if step == "report":
            numbers = [int(n) for n in _SOURCE_LINE.findall(user_text(body))][:6]
            sections = "\n\n".join(f"## Part {i}\n\n{_bench_sentences(f'part {i}', numbers, 5)}" for i in range(1, 5))
            return Reply(text=f"Descriptors take precedence over __getattr__ [{(numbers or [1])[0]}].\n\n{sections}\n")
        if step == "artifact":
            numbers = [int(n) for n in re.findall(r"\[(\d+)\]", user_text(body))][:3] or [1]
            findings = [{"text": f"Finding backed by source {n}.", "citations": [n]} for n in dict.fromkeys(numbers)]
            arguments = {
                "title": "Descriptors and __getattr__",
                "summary": "Descriptors come first.",
                "key_findings": findings,
            }
            return Reply(tool_calls=[Call("record_artifact", arguments)])
        return Reply(text="No answer scripted for this step.")


class RequestGate:
    """Holds one reply, or only its usage chunk, until another request arrives (the script sets
    `asked`), or until `patience_s` after the hold began if it never does: `gave_up` says which."""

    def __init__(self, patience_s: float) -> None:
        self.asked = threading.Event()
        self.gave_up = threading.Event()
        self._timer = threading.Timer(patience_s, self._give_up)

    def _give_up(self) -> None:
        self.gave_up.set()
        self.asked.set()

    def hold(self, reply: Reply) -> Reply:
        self._timer.start()
        return replace(reply, gate=self.asked)

    def hold_usage(self, reply: Reply) -> Reply:
        """The reply's text and finish reason at once, its usage chunk and end once released."""
        self._timer.start()
        return replace(reply, usage_gate=self.asked)

    def cancel(self) -> None:
        self._timer.cancel()
