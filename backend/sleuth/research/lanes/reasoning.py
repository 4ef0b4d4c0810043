"""Relays reasoning to clients while it streams: `think_tool` arguments and native reasoning."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sleuth.llm.json_stream import StreamingStringField
from sleuth.llm.repair import resolve_tool_name
from sleuth.llm.types import StreamHandlers
from sleuth.research.state import RunState
from sleuth.research.tool_schemas import THINK_TOOL
from sleuth.stream.packets import ReasoningDelta, ReasoningDone, ReasoningStart

Place = tuple[int, int, int | None]  # turn, tab, sub-turn


@dataclass
class _Block:
    place: Place
    parser: StreamingStringField | None
    text: list[str] = field(default_factory=list)


class ReasoningRelay:
    """Opens a reasoning block (via `open_block`) the first time reasoning arrives for a call."""

    def __init__(self, state: RunState, available_tools: list[str], open_block: Callable[[], Place]) -> None:
        self._state = state
        self._tools = available_tools
        self._open_block = open_block
        self._blocks: dict[object, _Block] = {}

    def _block(self, key: object, parser: StreamingStringField | None) -> _Block:
        if key not in self._blocks:
            block = _Block(place=self._open_block(), parser=parser)
            self._blocks[key] = block
            self._send(block, ReasoningStart(reasoning=""))
        return self._blocks[key]

    def _send(self, block: _Block, obj: ReasoningStart | ReasoningDelta | ReasoningDone) -> None:
        turn, tab, sub = block.place
        self._state.emit(obj, turn=turn, tab=tab, sub=sub)

    def on_tool_delta(self, index: int, name: str, arguments: str) -> None:
        if not name or resolve_tool_name(name, self._tools) != THINK_TOOL:
            return
        block = self._block(("tool", index), StreamingStringField())
        assert block.parser is not None
        text = block.parser.feed(arguments)
        if text:
            block.text.append(text)
            self._send(block, ReasoningDelta(reasoning=text))

    def on_reasoning(self, text: str) -> None:
        block = self._block("native", None)
        block.text.append(text)
        self._send(block, ReasoningDelta(reasoning=text))

    def handlers(self) -> StreamHandlers:
        return StreamHandlers(on_reasoning=self.on_reasoning, on_tool_delta=self.on_tool_delta)

    def finish(self) -> None:
        """Close every open block with the full text, then forget them (one relay per model call)."""
        for block in self._blocks.values():
            self._send(block, ReasoningDone(reasoning="".join(block.text)))
        self._blocks.clear()
